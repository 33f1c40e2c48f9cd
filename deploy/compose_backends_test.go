package deploy_test

import (
	"slices"
	"strings"
	"testing"
)

// Every Redis node is an independent master without snapshots, and without
// an append-only file but the queue's node (redis1); compose.yaml says why,
// next to x-redis.
func TestComposeRedisIndependentMasters(t *testing.T) {
	c := loadCompose(t)
	for _, name := range redisNodes {
		s, ok := c.Services[name]
		if !ok {
			continue // TestComposeServices reports it
		}
		if !strings.HasPrefix(s.Image, "redis:7") {
			t.Errorf("%s: image = %q, want redis:7*", name, s.Image)
		}
		if len(s.Command) == 0 || s.Command[0] != "redis-server" {
			t.Errorf("%s: command = %q, want [redis-server options...]", name, s.Command)
			continue
		}
		for _, arg := range s.Command {
			if a := strings.ToLower(arg); strings.Contains(a, "replicaof") || strings.Contains(a, "slaveof") {
				t.Errorf("%s: command has %q: Redlock nodes must be independent masters", name, arg)
			}
		}
		if got, ok := option(s.Command, "--save"); !ok || got != "" {
			t.Errorf(`%s: --save = %q (given: %v), want --save "" (no snapshots)`, name, got, ok)
		}
		checkAppendOnly(t, name, s.Command, name == queueNode)
		if len(s.Volumes) > 0 {
			t.Errorf("%s: volumes = %q, want none (nothing is persisted)", name, s.Volumes)
		}
		// A node that comes back at once, empty, can vote a second client
		// into a lock that is still held: Redlock's delayed-restart argument.
		if s.Restart != "" && s.Restart != "no" {
			t.Errorf(`%s: restart = %q, want "no": a crashed node must stay out longer than a lock TTL`, name, s.Restart)
		}
		if hc := healthTest(s); !slices.Contains(hc, "redis-cli") || !slices.Contains(hc, "ping") {
			t.Errorf("%s: healthcheck = %q, want redis-cli ping", name, hc)
		}
	}
}

// The etcd members form one static cluster: each has its own name and
// advertises its own URLs, and all name the same three peers, reachable at
// the URLs those peers advertise.
func TestComposeEtcd(t *testing.T) {
	c := loadCompose(t)
	var peers []string
	for _, name := range etcdMembers {
		peers = append(peers, name+"=http://"+name+":2380")
	}
	for _, name := range etcdMembers {
		s, ok := c.Services[name]
		if !ok {
			continue // TestComposeServices reports it
		}
		if !strings.Contains(s.Image, "etcd:v3.") {
			t.Errorf("%s: image = %q, want an official etcd v3 image", name, s.Image)
		}
		if len(s.Command) == 0 || !strings.HasSuffix(s.Command[0], "/etcd") {
			t.Errorf("%s: command = %q, want [/usr/local/bin/etcd flags...]", name, s.Command)
			continue
		}
		flags := parseFlags(s.Command[1:])
		for _, f := range []struct{ flag, want string }{
			{"name", name},
			{"advertise-client-urls", "http://" + name + ":2379"},
			{"initial-advertise-peer-urls", "http://" + name + ":2380"},
			{"listen-client-urls", "http://0.0.0.0:2379"},
			{"listen-peer-urls", "http://0.0.0.0:2380"},
			{"initial-cluster", strings.Join(peers, ",")},
			{"initial-cluster-state", "new"},
		} {
			if got := flags[f.flag]; got != f.want {
				t.Errorf("%s: --%s = %q, want %q", name, f.flag, got, f.want)
			}
		}
		if flags["initial-cluster-token"] != c.Services[etcdMembers[0]].flag("initial-cluster-token") {
			t.Errorf("%s: --initial-cluster-token differs from %s's: they would not form one cluster", name, etcdMembers[0])
		}
		if hc := healthTest(s); !slices.ContainsFunc(hc, func(a string) bool { return strings.HasSuffix(a, "etcdctl") }) ||
			!slices.Contains(hc, "health") {
			t.Errorf("%s: healthcheck = %q, want etcdctl endpoint health", name, hc)
		}
	}
}

// flag returns the value of --name=value in s's command, "" if absent.
func (s service) flag(name string) string {
	if len(s.Command) == 0 {
		return ""
	}
	return parseFlags(s.Command[1:])[name]
}

func TestComposeMySQL(t *testing.T) {
	s := loadCompose(t).Services["mysql"]
	if !strings.HasPrefix(s.Image, "mysql:8") {
		t.Errorf("mysql: image = %q, want mysql:8*", s.Image)
	}
	if got := s.Environment["MYSQL_DATABASE"]; got != "flashsale" {
		t.Errorf("mysql: MYSQL_DATABASE = %q, want flashsale", got)
	}
	if hc := healthTest(s); !slices.Contains(hc, "mysqladmin") || !slices.Contains(hc, "ping") {
		t.Errorf("mysql: healthcheck = %q, want mysqladmin ping", hc)
	}
}

func etcdEndpoints(c composeFile) string {
	var eps []string
	for _, name := range etcdMembers {
		eps = append(eps, strings.TrimPrefix(c.Services[name].flag("advertise-client-urls"), "http://"))
	}
	return strings.Join(eps, ",")
}

// redisAddrs is the SHOP_REDIS value the nodes defined in c call for.
func redisAddrs(c composeFile) string {
	var addrs []string
	for _, name := range redisNodes {
		port, ok := option(c.Services[name].Command, "--port")
		if !ok {
			port = "6379"
		}
		addrs = append(addrs, name+":"+port)
	}
	return strings.Join(addrs, ",")
}

// checkDSN checks that a go-sql-driver/mysql DSN reaches the mysql service's
// database as its user, with the parameters the shop relies on.
func checkDSN(t *testing.T, shop, dsn string, mysql service) {
	t.Helper()
	env := mysql.Environment
	want := env["MYSQL_USER"] + ":" + env["MYSQL_PASSWORD"] + "@tcp(mysql:3306)/" + env["MYSQL_DATABASE"] + "?"
	if !strings.HasPrefix(dsn, want) {
		t.Errorf("%s: SHOP_MYSQL_DSN = %q, want it to start with %q", shop, dsn, want)
	}
	_, query, _ := strings.Cut(dsn, "?")
	params := strings.Split(query, "&")
	for _, p := range []string{"parseTime=true", "interpolateParams=true"} {
		if !slices.Contains(params, p) {
			t.Errorf("%s: SHOP_MYSQL_DSN = %q, want %s", shop, dsn, p)
		}
	}
}

// queueNode is the Redis node that holds redis-queue's streams, the first.
const queueNode = "redis1"

// checkAppendOnly checks a redis-server command's append-only file: on,
// fsynced every second, for a node that holds queued orders; off for the
// others.
func checkAppendOnly(t *testing.T, name string, command []string, queue bool) {
	t.Helper()
	got, _ := option(command, "--appendonly")
	switch {
	case queue && got != "yes":
		t.Errorf("%s: --appendonly = %q, want yes: it holds redis-queue's accepted orders", name, got)
	case queue:
		if f, _ := option(command, "--appendfsync"); f != "everysec" {
			t.Errorf("%s: --appendfsync = %q, want everysec", name, f)
		}
	case got != "no":
		t.Errorf("%s: --appendonly = %q, want no", name, got)
	}
}

// option returns the argument after name in args ("--save", "" gives "").
