package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LatestLink is the name of the link, beside the report folders, to the
// newest one.
const LatestLink = "latest"

// LinkLatest points base/latest at dir, a folder inside base, replacing
// the link a previous run left; the link is relative, so that base can be
// moved. It refuses to replace a latest that is not a link. Not safe for
// two runs finishing at once on the same base.
func LinkLatest(base, dir string) error {
	link := filepath.Join(base, LatestLink)
	if fi, err := os.Lstat(link); err == nil {
		if fi.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("report: %s is not a link; leaving it", link)
		}
		if err := os.Remove(link); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("report: %w", err)
	}
	rel, err := filepath.Rel(base, dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Symlink(rel, link); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
