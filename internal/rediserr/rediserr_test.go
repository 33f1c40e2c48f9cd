package rediserr_test

import (
	"context"
	"errors"
	"testing"

	"github.com/flashsale/flashsale/internal/rediserr"
)

var errDown = errors.New("pkg: redis unavailable")

func TestWrap(t *testing.T) {
	if err := rediserr.Wrap(context.Background(), nil, errDown, "pkg", "take", "k"); err != nil {
		t.Errorf("nil: got %v, want nil", err)
	}
	refused := errors.New("dial tcp: connection refused")
	err := rediserr.Wrap(context.Background(), refused, errDown, "pkg", "take", "k")
	if !errors.Is(err, errDown) || !errors.Is(err, refused) {
		t.Errorf("refused: got %v, want it to wrap %v and the cause", err, errDown)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = rediserr.Wrap(ctx, context.Canceled, errDown, "pkg", "take", "k")
	if errors.Is(err, errDown) || !errors.Is(err, context.Canceled) {
		t.Errorf("caller gave up: got %v, want context.Canceled and not %v", err, errDown)
	}
}
