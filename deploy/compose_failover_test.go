package deploy_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	// sentinel monitor <name> <host> <port> <quorum>, in a Sentinel's script.
	sentinelMonitor = regexp.MustCompile(`sentinel monitor (\S+) (\S+) (\d+) (\d+)`)
	// The port line of a Sentinel's configuration, in its script.
	sentinelPort = regexp.MustCompile(`'port (\d+)'`)
)

// The profile failover: a master and its replica, three Sentinels that
// monitor the master under the name the failover shops give, and those
// shops, wired to the Sentinels and to redlock's five nodes, on a database
// of their own. Every service of it is in the profile and no other is, so
// that a plain `docker compose up` starts none of it.
func TestComposeFailoverProfile(t *testing.T) {
	c := loadCompose(t)
	failover := slices.Concat([]string{"redis-master", "redis-replica"}, sentinels, failoverShops)
	for _, name := range failover {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("compose.yaml: service %q missing", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		in, want := slices.Contains(c.Services[name].Profiles, "failover"), slices.Contains(failover, name)
		if in != want {
			t.Errorf("%s: in profile failover = %t, want %t", name, in, want)
		}
	}
	master, replica := c.Services["redis-master"], c.Services["redis-replica"]
	for _, name := range []string{"redis-master", "redis-replica"} {
		checkUnpersistedRedis(t, name, c.Services[name])
	}
	if _, ok := option(master.Command, "--replicaof"); ok {
		t.Errorf("redis-master: command = %q, want no --replicaof", master.Command)
	}
	if i := slices.Index(replica.Command, "--replicaof"); i < 0 || i+2 >= len(replica.Command) ||
		replica.Command[i+1] != "redis-master" || replica.Command[i+2] != "6379" {
		t.Errorf("redis-replica: command = %q, want --replicaof redis-master 6379", replica.Command)
	}
	if got := replica.DependsOn["redis-master"].Condition; got != "service_healthy" {
		t.Errorf("redis-replica: depends_on redis-master: condition = %q, want service_healthy", got)
	}

	name, addrs := checkSentinels(t, c)
	checkFailoverShops(t, c, name, strings.Join(addrs, ","))
	for _, shop := range shops {
		for _, k := range []string{"SHOP_REDIS_SENTINEL", "SHOP_REDIS_MASTER"} {
			if v, ok := c.Services[shop].Environment[k]; ok {
				t.Errorf("%s: %s = %q, want it unset: shop1..shop3 lock on redis1 (the failover shops have their own)", shop, k, v)
			}
		}
	}
}

// checkSentinels checks that every Sentinel monitors redis-master under
// one name with a majority for its quorum, and runs as a Sentinel; it
// returns that name and the Sentinels' host:port.
func checkSentinels(t *testing.T, c composeFile) (master string, addrs []string) {
	t.Helper()
	for _, name := range sentinels {
		s := c.Services[name]
		script := strings.Join(s.Command, " ")
		m, port := sentinelMonitor.FindStringSubmatch(script), sentinelPort.FindStringSubmatch(script)
		if m == nil || port == nil {
			t.Errorf("%s: command = %q, want a configuration with 'port N' and 'sentinel monitor NAME redis-master 6379 QUORUM'", name, s.Command)
			continue
		}
		addrs = append(addrs, name+":"+port[1])
		if m[2] != "redis-master" || m[3] != "6379" {
			t.Errorf("%s: monitors %s:%s, want redis-master:6379", name, m[2], m[3])
		}
		if q, _ := strconv.Atoi(m[4]); q != len(sentinels)/2+1 {
			t.Errorf("%s: quorum %d, want a majority of the %d Sentinels", name, q, len(sentinels))
		}
		if master == "" {
			master = m[1]
		} else if m[1] != master {
			t.Errorf("%s: monitors the master as %q, %s as %q: one master, one name", name, m[1], sentinels[0], master)
		}
		if !strings.Contains(script, "--sentinel") && !strings.Contains(script, "redis-sentinel ") {
			t.Errorf("%s: command = %q, want redis-server ... --sentinel or redis-sentinel", name, s.Command)
		}
		if hc := healthTest(s); !slices.Contains(hc, "redis-cli") || !slices.Contains(hc, port[1]) || !slices.Contains(hc, "ping") {
			t.Errorf("%s: healthcheck = %q, want redis-cli -p %s ping", name, hc, port[1])
		}
	}
	return master, addrs
}

// checkFailoverShops checks the failover shops' wiring: the Sentinels and
// the master's name, redlock's five nodes, every variable one that `shop
// --help` names, and a database of their own that the mysql service
// creates.
func checkFailoverShops(t *testing.T, c composeFile, master, sentinelAddrs string) {
	t.Helper()
	help := helpOutput(t, "shop")
	for _, name := range failoverShops {
		s := c.Services[name]
		env := s.Environment
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if strings.HasPrefix(k, "SHOP_") && !mentionsEnv(help, k) {
				t.Errorf("%s: environment sets %s, which `shop --help` does not mention", name, k)
			}
		}
		for _, v := range []struct{ key, want, why string }{
			{"SHOP_REDIS_SENTINEL", sentinelAddrs, "the three Sentinels"},
			{"SHOP_REDIS_MASTER", master, "the name the Sentinels monitor"},
			{"SHOP_REDIS", redisAddrs(c), "redlock's five nodes"},
			{"SHOP_ETCD", etcdEndpoints(c), "the three etcd members"},
		} {
			if got := env[v.key]; got != v.want {
				t.Errorf("%s: %s = %q, want %q (%s)", name, v.key, got, v.want, v.why)
			}
		}
		if first := c.Services[failoverShops[0]].Environment; !maps.Equal(env, first) {
			t.Errorf("%s: environment = %v, want the same as %s: %v", name, env, failoverShops[0], first)
		}
		for _, dep := range slices.Concat([]string{"mysql"}, redisNodes, etcdMembers, sentinels) {
			if got := s.DependsOn[dep].Condition; got != "service_healthy" {
				t.Errorf("%s: depends_on %s: condition = %q, want service_healthy", name, dep, got)
			}
		}
		checkShopProbe(t, name, healthTest(s), shopPort(s))
	}
	checkOwnDatabase(t, c, "failover shops", c.Services[failoverShops[0]].Environment["SHOP_MYSQL_DSN"])
}

// checkOwnDatabase checks that dsn, who's, names a database other than
// the shops', on the mysql service, as its user, and that a script the
// mysql service runs at initialisation creates it and grants it to that
// user.
func checkOwnDatabase(t *testing.T, c composeFile, who, dsn string) {
	t.Helper()
	mysql := c.Services["mysql"]
	user := mysql.Environment["MYSQL_USER"]
	prefix := user + ":" + mysql.Environment["MYSQL_PASSWORD"] + "@tcp(mysql:3306)/"
	rest, ok := strings.CutPrefix(dsn, prefix)
	db, query, _ := strings.Cut(rest, "?")
	if !ok || db == "" || db == mysql.Environment["MYSQL_DATABASE"] {
		t.Fatalf("%s: SHOP_MYSQL_DSN = %q, want %s<a database other than %s>?...: the registry refuses shops on other lock servers beside shop1..shop3",
			who, dsn, prefix, mysql.Environment["MYSQL_DATABASE"])
	}
	for _, p := range []string{"parseTime=true", "interpolateParams=true"} {
		if !slices.Contains(strings.Split(query, "&"), p) {
			t.Errorf("%s: SHOP_MYSQL_DSN = %q, want %s", who, dsn, p)
		}
	}
	var script string
	for _, v := range mysql.Volumes {
		host, target, _ := strings.Cut(v, ":")
		if strings.HasPrefix(target, "/docker-entrypoint-initdb.d/") {
			data, err := os.ReadFile(host)
			if err != nil {
				t.Fatalf("mysql: volume %q: %v", v, err)
			}
			script += string(data)
		}
	}
	for _, want := range []string{"CREATE DATABASE IF NOT EXISTS " + db + " ", "ON " + db + ".* TO '" + user + "'@'%'"} {
		if !strings.Contains(script, want) {
			t.Errorf("mysql: no script in /docker-entrypoint-initdb.d says %q", want)
		}
	}
}

// checkUnpersistedRedis checks a Redis service of the failover or cluster
// profile: no snapshots, and the append-only file of a node that holds
// queued orders.
func checkUnpersistedRedis(t *testing.T, name string, s service) {
	t.Helper()
	if !strings.HasPrefix(s.Image, "redis:7") {
		t.Errorf("%s: image = %q, want redis:7*", name, s.Image)
	}
	if len(s.Command) == 0 || s.Command[0] != "redis-server" {
		t.Errorf("%s: command = %q, want [redis-server options...]", name, s.Command)
		return
	}
	if got, ok := option(s.Command, "--save"); !ok || got != "" {
		t.Errorf(`%s: --save = %q (given: %v), want --save "" (no snapshots)`, name, got, ok)
	}
	checkAppendOnly(t, name, s.Command, true) // the failover shops' queue
	if hc := healthTest(s); !slices.Contains(hc, "redis-cli") || !slices.Contains(hc, "ping") {
		t.Errorf("%s: healthcheck = %q, want redis-cli ping", name, hc)
	}
}
