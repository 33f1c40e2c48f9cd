package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Time limits of the readiness probe: a probe must answer quickly even when
// a backend hangs, or the load balancer's own timeout decides for us.
const (
	dbPingTimeout    = time.Second
	redisPingTimeout = 500 * time.Millisecond
)

// healthz handles GET /healthz: 200 whenever the process serves HTTP.
func (a *api) healthz(c *gin.Context) {
	c.PureJSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz handles GET /readyz: 200 when the database answers a ping and the
// Redis quorum answers PING, 503 unavailable (with Retry-After) otherwise.
//
// The Redis quorum is what the lock modes need: a majority of the nodes for
// redlock, and the first node, which alone serves lua, naive and the dedupe
// locks of every mode. All nodes are pinged at once, so the probe takes as
// long as the slowest node, capped by redisPingTimeout.
func (a *api) readyz(c *gin.Context) {
	ctx := c.Request.Context()
	var problems []string
	if err := a.pingDB(ctx); err != nil {
		// The driver's error may name hosts and users: log it, answer
		// the anonymous caller with less.
		_ = c.Error(err)
		problems = append(problems, "database: ping failed")
	}
	up, firstUp := a.pingRedis(ctx)
	n := len(a.redis)
	need := n/2 + 1
	if up < need || !firstUp {
		problems = append(problems, fmt.Sprintf(
			"redis: %d of %d nodes answer, need %d including node 0 (first node up: %t)", up, n, need, firstUp))
	}
	if len(problems) > 0 {
		writeError(c, &requestError{kind: errNotReady, msg: "not ready: " + strings.Join(problems, "; ")})
		return
	}
	c.PureJSON(http.StatusOK, gin.H{"status": "ready", "redis_nodes_up": up, "redis_nodes": n})
}

// pingDB pings the database's connection pool.
func (a *api) pingDB(ctx context.Context) error {
	if a.db == nil {
		return fmt.Errorf("not configured")
	}
	ctx, cancel := context.WithTimeout(ctx, dbPingTimeout)
	defer cancel()
	sqlDB, err := a.db.DB()
	if err != nil {
		return fmt.Errorf("no connection pool: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("database ping: %w", err)
	}
	return nil
}

// pingRedis pings every node concurrently and reports how many answered and
// whether the first one did.
func (a *api) pingRedis(ctx context.Context) (up int, firstUp bool) {
	ctx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	ok := make([]bool, len(a.redis))
	var wg sync.WaitGroup
	for i, client := range a.redis {
		wg.Go(func() { ok[i] = client.Ping(ctx).Err() == nil })
	}
	wg.Wait()
	for _, b := range ok {
		if b {
			up++
		}
	}
	return up, len(ok) > 0 && ok[0]
}
