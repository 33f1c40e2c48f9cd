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
// Redis servers the strategies need answer PING, 503 unavailable (with
// Retry-After) otherwise.
//
// The strategies need a majority of the nodes for redlock, etcd's quorum
// for strategy etcd (when the shop has an etcd cluster), the ZooKeeper
// ensemble's for strategy zookeeper (when it has one), and the one
// Redis that alone serves lua, naive, fenced, the dedupe locks of every
// strategy and redis-decr: the first node, or, with a Sentinel-managed master,
// the master the Sentinels name now, whose address the answer carries
// (redis_master). A shop whose queue consumers cannot write their
// batches (redis-queue) is not ready either, and says which product.
// Everything is asked at once, so the probe takes as long
// as the slowest backend, capped by the timeouts above.
func (a *api) readyz(c *gin.Context) {
	ctx := c.Request.Context()
	var master, masterProblem string
	var wg sync.WaitGroup
	if a.master != nil {
		wg.Go(func() { master, masterProblem = a.checkMaster(ctx) })
	}
	var etcdProblem string
	wg.Go(func() { etcdProblem = a.checkEtcd(ctx) })
	var zkProblem string
	wg.Go(func() { zkProblem = a.checkZooKeeper(ctx) })
	var problems []string
	if err := a.pingDB(ctx); err != nil {
		// The driver's error may name hosts and users: log it, answer
		// the anonymous caller with less.
		_ = c.Error(err)
		problems = append(problems, "database: ping failed")
	}
	up, firstUp := a.pingRedis(ctx)
	wg.Wait()
	n := len(a.redis)
	need := n/2 + 1
	switch {
	case a.master == nil && (up < need || !firstUp):
		problems = append(problems, fmt.Sprintf(
			"redis: %d of %d nodes answer, need %d including node 0 (first node up: %t)", up, n, need, firstUp))
	case up < need:
		problems = append(problems, fmt.Sprintf("redis: %d of %d nodes answer, need %d", up, n, need))
	}
	if masterProblem != "" {
		problems = append(problems, masterProblem)
	}
	if etcdProblem != "" {
		problems = append(problems, etcdProblem)
	}
	if zkProblem != "" {
		problems = append(problems, zkProblem)
	}
	if a.statuses != nil {
		// Queued orders this shop's consumers cannot write stay pending,
		// not lost; but the shop is not doing its part.
		if p := a.statuses.QueueProblem(); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		writeError(c, &requestError{kind: errNotReady, msg: "not ready: " + strings.Join(problems, "; ")})
		return
	}
	ready := gin.H{"status": "ready", "redis_nodes_up": up, "redis_nodes": n}
	if a.master != nil {
		ready["redis_master"] = master
	}
	if a.etcd != nil {
		ready["etcd"] = "quorum"
	}
	if a.zk != nil {
		ready["zookeeper"] = "quorum"
	}
	c.PureJSON(http.StatusOK, ready)
}

// checkMaster asks the Sentinels where the master is and pings it, each
// within redisPingTimeout. It returns the master's address, if the
// Sentinels named one, and why it is not ready, if it is not.
func (a *api) checkMaster(ctx context.Context) (addr, problem string) {
	askCtx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	addr, err := a.master.Addr(askCtx)
	cancel()
	if err != nil {
		return "", "redis master: " + err.Error()
	}
	pingCtx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	if err := a.master.Ping(pingCtx); err != nil {
		return addr, fmt.Sprintf("redis master: %s does not answer", addr)
	}
	return addr, ""
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
