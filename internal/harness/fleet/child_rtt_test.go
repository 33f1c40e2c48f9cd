package fleet

import (
	"path/filepath"
	"testing"
	"time"
)

// A child shop puts the parent's network on its own links: its database
// waits the db RTT per round trip.
func TestChildBackendsTakeTheRTT(t *testing.T) {
	c := childConfig{SQLitePath: filepath.Join(t.TempDir(), "db.sqlite"), RTT: "db=20ms"}
	b, err := c.backends(t.Context())
	if err != nil {
		t.Fatalf("backends: %v", err)
	}
	defer b.Close()
	if got, want := b.Net.RTT().String(), "db=20ms"; got != want {
		t.Fatalf("the child's network: rtt %q, want %q", got, want)
	}
	sqlDB, err := b.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := sqlDB.PingContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	if took, want := time.Since(start), 20*time.Millisecond; took < want {
		t.Errorf("a ping at db rtt %v took %v, want at least %v", want, took, want)
	}

	c.RTT = "disk=1ms"
	if _, err := c.backends(t.Context()); err == nil {
		t.Errorf("a child told rtt %q: got no error, want one", c.RTT)
	}
}
