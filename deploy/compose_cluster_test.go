package deploy_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

var (
	// Profile cluster: a Redis Cluster, its one-shot creator, and shops on it.
	clusterNodes   = []string{"redis-cluster1", "redis-cluster2", "redis-cluster3", "redis-cluster4", "redis-cluster5", "redis-cluster6"}
	clusterCreator = "redis-cluster-create"
	clusterShops   = []string{"cluster-shop1", "cluster-shop2"}
)

// The profile cluster: six Redis nodes in cluster mode, a one-shot service
// that joins them into three masters with a replica each once all six are
// healthy, and shops wired to every node of it and to redlock's five
// nodes, on a database of their own, that start once the cluster is made.
// Every service of it is in the profile and no other is.
func TestComposeClusterProfile(t *testing.T) {
	c := loadCompose(t)
	profile := slices.Concat(clusterNodes, []string{clusterCreator}, clusterShops)
	for _, name := range profile {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("compose.yaml: service %q missing", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		in, want := slices.Contains(c.Services[name].Profiles, "cluster"), slices.Contains(profile, name)
		if in != want {
			t.Errorf("%s: in profile cluster = %t, want %t", name, in, want)
		}
	}
	var addrs []string
	for _, name := range clusterNodes {
		s := c.Services[name]
		checkUnpersistedRedis(t, name, s) // no snapshots; an append-only file for redis-queue's streams
		if got, _ := option(s.Command, "--cluster-enabled"); got != "yes" {
			t.Errorf("%s: --cluster-enabled = %q, want yes", name, got)
		}
		if s.Restart != "no" {
			t.Errorf(`%s: restart = %q, want "no": a killed master stays down, and its replica takes over`, name, s.Restart)
		}
		addrs = append(addrs, name+":6379")
	}

	create := c.Services[clusterCreator]
	script := strings.Join(create.Command, " ")
	for _, want := range []string{"redis-cli --cluster create", "--cluster-replicas 1", "--cluster-yes", "cluster_state:ok"} {
		if !strings.Contains(script, want) {
			t.Errorf("%s: command = %q, want it to say %q", clusterCreator, create.Command, want)
		}
	}
	if !strings.Contains(script, "for n in 1 2 3 4 5 6") || !strings.Contains(script, "redis-cluster$$n") {
		t.Errorf("%s: command = %q, want it to join redis-cluster1..6", clusterCreator, create.Command)
	}
	if create.Restart != "no" {
		t.Errorf(`%s: restart = %q, want "no": it runs once`, clusterCreator, create.Restart)
	}
	for _, name := range clusterNodes {
		if got := create.DependsOn[name].Condition; got != "service_healthy" {
			t.Errorf("%s: depends_on %s: condition = %q, want service_healthy", clusterCreator, name, got)
		}
	}

	help := helpOutput(t, "shop")
	for _, name := range clusterShops {
		s := c.Services[name]
		env := s.Environment
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if strings.HasPrefix(k, "SHOP_") && !mentionsEnv(help, k) {
				t.Errorf("%s: environment sets %s, which `shop --help` does not mention", name, k)
			}
		}
		for _, v := range []struct{ key, want, why string }{
			{"SHOP_REDIS_CLUSTER", strings.Join(addrs, ","), "the six nodes of the cluster"},
			{"SHOP_REDIS", redisAddrs(c), "redlock's five nodes"},
			{"SHOP_ETCD", etcdEndpoints(c), "the three etcd members"},
		} {
			if got := env[v.key]; got != v.want {
				t.Errorf("%s: %s = %q, want %q (%s)", name, v.key, got, v.want, v.why)
			}
		}
		if _, ok := env["SHOP_REDIS_SENTINEL"]; ok {
			t.Errorf("%s: SHOP_REDIS_SENTINEL set: a shop takes a cluster or Sentinels, not both", name)
		}
		if first := c.Services[clusterShops[0]].Environment; !maps.Equal(env, first) {
			t.Errorf("%s: environment = %v, want the same as %s: %v", name, env, clusterShops[0], first)
		}
		if got := s.DependsOn[clusterCreator].Condition; got != "service_completed_successfully" {
			t.Errorf("%s: depends_on %s: condition = %q, want service_completed_successfully (the cluster made)", name, clusterCreator, got)
		}
		for _, dep := range slices.Concat([]string{"mysql"}, redisNodes, etcdMembers) {
			if got := s.DependsOn[dep].Condition; got != "service_healthy" {
				t.Errorf("%s: depends_on %s: condition = %q, want service_healthy", name, dep, got)
			}
		}
		checkShopProbe(t, name, healthTest(s), shopPort(s))
	}
	checkOwnDatabase(t, c, "cluster shops", c.Services[clusterShops[0]].Environment["SHOP_MYSQL_DSN"])
	for _, shop := range shops {
		if v, ok := c.Services[shop].Environment["SHOP_REDIS_CLUSTER"]; ok {
			t.Errorf("%s: SHOP_REDIS_CLUSTER = %q, want it unset: shop1..shop3 lock on redis1", shop, v)
		}
	}
}
