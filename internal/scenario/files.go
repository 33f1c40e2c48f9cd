package scenario

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ErrTooManyOpenFiles is returned by Run and Sweep when a request failed
// because this process had no file descriptor left (EMFILE, ENFILE): every
// connection is one, and without --targets so is every connection the
// shops accept and make. The attack stops at once; the rows and points
// measured before it are kept, the half-done one is not. Beyond that
// point the shops would refuse connections and embedded etcd would exit
// the process on a file it cannot open.
var ErrTooManyOpenFiles = errors.New("scenario: too many open files")

// outOfFiles returns an error wrapping ErrTooManyOpenFiles if r failed for
// want of a file descriptor, after sent requests; nil otherwise.
func outOfFiles(r *vegeta.Result, sent int) error {
	// syscall.EMFILE's text is "too many open files"; ENFILE's
	// ("... in system") contains it.
	if r.Error == "" || !strings.Contains(r.Error, syscall.EMFILE.Error()) {
		return nil
	}
	return fmt.Errorf("%w: after %d requests: %s", ErrTooManyOpenFiles, sent, r.Error)
}
