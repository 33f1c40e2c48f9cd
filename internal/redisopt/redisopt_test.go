package redisopt_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/flashsale/flashsale/internal/redisopt"
)

// Every client never resends, dials once, skips the probes on connect,
// and keeps what the caller chose, the dialer included.
func TestOptionsKeepTheSettings(t *testing.T) {
	dialed := 0
	s := redisopt.Settings{
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			dialed++
			return nil, net.ErrClosed
		},
		PoolSize: 7, PoolTimeout: 2 * time.Second, MinIdleConns: 3,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 3 * time.Second,
		ContextTimeout: true,
	}
	c := redisopt.Client("a:1", s)
	if c.Addr != "a:1" || c.MaxRetries != -1 || c.DialerRetries != 1 || !c.DisableIdentity ||
		c.MaintNotificationsConfig == nil || c.MaintNotificationsConfig.Mode != maintnotifications.ModeDisabled {
		t.Errorf("Client = %+v: want addr a:1, never resent, one dial, no probes", c)
	}
	if c.PoolSize != 7 || c.PoolTimeout != 2*time.Second || c.MinIdleConns != 3 || c.DialTimeout != time.Second ||
		c.ReadTimeout != 2*time.Second || c.WriteTimeout != 3*time.Second || !c.ContextTimeoutEnabled {
		t.Errorf("Client = %+v: the settings %+v not kept", c, s)
	}
	cl := redisopt.Cluster([]string{"a:1", "b:2"}, time.Second, s)
	if len(cl.Addrs) != 2 || cl.MaxRedirects != -1 || cl.MaxRetries != -1 || cl.ClusterStateReloadInterval != time.Second ||
		cl.PoolSize != 7 || cl.ReadTimeout != 2*time.Second || !cl.ContextTimeoutEnabled || !cl.DisableIdentity {
		t.Errorf("Cluster = %+v: want never redirected nor resent, the settings kept", cl)
	}
	f := redisopt.Failover("m", []string{"s:1"}, s)
	if f.MasterName != "m" || len(f.SentinelAddrs) != 1 || f.MaxRetries != -1 || f.DialerRetries != 1 ||
		f.PoolSize != 7 || f.MinIdleConns != 3 || f.WriteTimeout != 3*time.Second || !f.ContextTimeoutEnabled {
		t.Errorf("Failover = %+v: want never resent, the settings kept", f)
	}
	for _, d := range []func(context.Context, string, string) (net.Conn, error){c.Dialer, cl.Dialer, f.Dialer} {
		if d == nil {
			t.Fatal("a Dialer was dropped")
		}
		_, _ = d(context.Background(), "tcp", "a:1")
	}
	if dialed != 3 {
		t.Errorf("the caller's dialer ran %d times, want 3", dialed)
	}
}
