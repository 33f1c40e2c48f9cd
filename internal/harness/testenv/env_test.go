package testenv

import (
	"context"
	"testing"
)

func TestBackendsPairModes(t *testing.T) {
	Backends(t, func(t *testing.T, b *Env) {
		if b.Redis.Mode() != b.Mode || b.DB.Mode() != b.Mode {
			t.Fatalf("modes: env %s, redis %s, db %s; want all equal", b.Mode, b.Redis.Mode(), b.DB.Mode())
		}
		if err := b.Redis.Clients()[0].Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		if err := b.DB.DB().Exec("SELECT 1").Error; err != nil {
			t.Fatal(err)
		}
	})
}
