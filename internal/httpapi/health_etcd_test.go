package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/httpapi"
)

// quorumRead asks the cluster as the shop does (package app's etcdReady):
// a linearizable read, which only a quorum answers.
type quorumRead struct{ c *clientv3.Client }

func (q quorumRead) Ready(ctx context.Context) error {
	_, err := q.c.Get(ctx, "flashsale/readyz", clientv3.WithCountOnly())
	return err
}

// TestReadyzAsksEtcd stops two of the three etcd members: /readyz answers
// 503 naming etcd while the quorum is gone, and 200 with "etcd":"quorum"
// before and after.
func TestReadyzAsksEtcd(t *testing.T) {
	testenv.Etcd(t, func(t *testing.T, c *testenv.EtcdCluster) {
		c.Reserve()
		h := httpapi.NewRouter(httpapi.Deps{Etcd: quorumRead{c.Client()}, Logger: slog.New(slog.DiscardHandler), DB: nil})
		ready := func(t *testing.T) (int, string) {
			t.Helper()
			rec := do(t, h, request{method: "GET", path: "/readyz"})
			return rec.Code, rec.Body.String()
		}
		// With no database the probe is never ready; what matters is what
		// it says of etcd.
		code, body := ready(t)
		if code != http.StatusServiceUnavailable || strings.Contains(body, "etcd") {
			t.Fatalf("readyz with etcd up = %d %s, want 503 for the database only", code, body)
		}
		c.Stop(1)
		c.Stop(2)
		code, body = ready(t)
		var e struct{ Error struct{ Message string } }
		_ = json.Unmarshal([]byte(body), &e)
		if code != http.StatusServiceUnavailable || !strings.Contains(e.Error.Message, "etcd: no quorum read") {
			t.Errorf("readyz with 2 of 3 members down = %d %s, want 503 naming etcd", code, body)
		}
		var wg sync.WaitGroup
		wg.Go(func() { c.Start(1) })
		wg.Go(func() { c.Start(2) })
		wg.Wait()
		if code, body = ready(t); strings.Contains(body, "etcd") {
			t.Errorf("readyz after the members came back = %d %s, want nothing said of etcd", code, body)
		}
	})
}
