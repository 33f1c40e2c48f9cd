// Package flashsale_test checks the deployment files at the root of the
// repository, compose.yaml and the Dockerfile, by reading them: the machines
// that run these tests cannot start containers. It checks what breaks
// silently when code and deployment drift apart: a renamed flag, a Redis node
// missing from a list, a health check that nothing in the image can run.
package flashsale_test

import (
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// composeFile is the part of the Compose specification these tests read.
// It expects the forms compose.yaml uses (lists for commands, maps for the
// environment and depends_on); another form fails to decode, loudly.
type composeFile struct {
	Services map[string]service `yaml:"services"`
}

type service struct {
	Image       string               `yaml:"image"`
	Build       any                  `yaml:"build"` // "." or {context: ...}
	Entrypoint  []string             `yaml:"entrypoint"`
	Command     []string             `yaml:"command"`
	Environment map[string]string    `yaml:"environment"`
	DependsOn   map[string]dependsOn `yaml:"depends_on"`
	Healthcheck *healthcheck         `yaml:"healthcheck"`
	Ports       []string             `yaml:"ports"`
	Volumes     []string             `yaml:"volumes"`
	Profiles    []string             `yaml:"profiles"`
	Restart     string               `yaml:"restart"`
}

type dependsOn struct {
	Condition string `yaml:"condition"`
}

type healthcheck struct {
	Test []string `yaml:"test"`
}

var (
	redisNodes  = []string{"redis1", "redis2", "redis3", "redis4", "redis5"}
	etcdMembers = []string{"etcd1", "etcd2", "etcd3"}
	shops       = []string{"shop1", "shop2", "shop3"}

	// Profile failover: a replicated Redis under Sentinel, and shops on it.
	sentinels     = []string{"sentinel1", "sentinel2", "sentinel3"}
	failoverShops = []string{"failover-shop1", "failover-shop2"}
)

// loadCompose parses compose.yaml, resolving YAML anchors and merge keys
// (x-redis, x-shop) the way Compose does: a key written beside a merge
// overrides the merged one. The parser applies that rule when it decodes
// into maps, but reports the override as a duplicate key when it decodes
// into a struct; so the file is resolved into maps first, then decoded.
func loadCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var resolved map[string]any
	if err := yaml.Unmarshal(data, &resolved); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if data, err = yaml.Marshal(resolved); err != nil {
		t.Fatalf("compose.yaml, resolved: %v", err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

func TestComposeServices(t *testing.T) {
	c := loadCompose(t)
	want := slices.Concat([]string{"mysql"}, redisNodes, etcdMembers, shops, []string{"loadgen", "prometheus", "grafana"})
	for _, name := range want {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("compose.yaml: service %q missing", name)
		}
	}
}

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

// The shops set only variables the shop reads, point at the services defined
// here, and are interchangeable replicas.
func TestComposeShops(t *testing.T) {
	c := loadCompose(t)
	help := helpOutput(t, "shop")
	for _, name := range shops {
		s, ok := c.Services[name]
		if !ok {
			continue // TestComposeServices reports it
		}
		if s.Build == nil {
			t.Errorf("%s: no build: want the image built from ./Dockerfile", name)
		}
		env := s.Environment
		for _, k := range slices.Sorted(maps.Keys(env)) {
			if strings.HasPrefix(k, "SHOP_") && !mentionsEnv(help, k) {
				t.Errorf("%s: environment sets %s, which `shop --help` does not mention", name, k)
			}
		}
		if got, want := env["SHOP_REDIS"], redisAddrs(c); got != want {
			t.Errorf("%s: SHOP_REDIS = %q, want %q (all five nodes in order; the first also serves lua, naive, dedupe)", name, got, want)
		}
		checkDSN(t, name, env["SHOP_MYSQL_DSN"], c.Services["mysql"])
		if env["SHOP_ADMIN_TOKEN"] == "" {
			t.Errorf("%s: SHOP_ADMIN_TOKEN unset: admin routes stay closed and loadgen cannot create products", name)
		}
		if first := c.Services[shops[0]].Environment; !maps.Equal(env, first) {
			t.Errorf("%s: environment = %v, want the same as %s: %v", name, env, shops[0], first)
		}
		if got, want := env["SHOP_ETCD"], etcdEndpoints(c); got != want {
			t.Errorf("%s: SHOP_ETCD = %q, want %q (the three members' client URLs)", name, got, want)
		}
		for _, dep := range slices.Concat([]string{"mysql"}, redisNodes, etcdMembers) {
			if got := s.DependsOn[dep].Condition; got != "service_healthy" {
				t.Errorf("%s: depends_on %s: condition = %q, want service_healthy", name, dep, got)
			}
		}
		checkShopProbe(t, name, healthTest(s), shopPort(s))
	}
}

// The load generator is wired to the three shops, the five Redis nodes and
// the admin token the shops were given, with flags that cmd/loadgen has.
func TestComposeLoadgen(t *testing.T) {
	c := loadCompose(t)
	help := helpOutput(t, "loadgen")
	s := c.Services["loadgen"]
	if !slices.Contains(s.Profiles, "loadgen") {
		t.Errorf("loadgen: profiles = %q, want loadgen (so that `docker compose up` does not start a load test)", s.Profiles)
	}
	if s.Build == nil || s.Image != c.Services[shops[0]].Image {
		t.Errorf("loadgen: build %v, image %q: want the shops' image (%q), built from ./Dockerfile", s.Build, s.Image, c.Services[shops[0]].Image)
	}
	if len(s.Entrypoint) == 0 || !installedBinaries(t)[s.Entrypoint[0]] || !strings.HasSuffix(s.Entrypoint[0], "/loadgen") {
		t.Fatalf("loadgen: entrypoint = %q, want the loadgen binary the Dockerfile installs", s.Entrypoint)
	}
	flags := parseFlags(slices.Concat(s.Entrypoint[1:], s.Command))
	for _, f := range slices.Sorted(maps.Keys(flags)) {
		if !mentionsFlag(help, f) {
			t.Errorf("loadgen: flag --%s is not in `loadgen --help`", f)
		}
	}

	var targets []string
	for _, name := range shops {
		targets = append(targets, "http://"+name+":"+shopPort(c.Services[name]))
	}
	for _, f := range []struct{ flag, want string }{
		{"targets", strings.Join(targets, ",")},
		{"redis", redisAddrs(c)}, // for --redlock-kill
		{"admin-token", c.Services[shops[0]].Environment["SHOP_ADMIN_TOKEN"]},
	} {
		if got := flags[f.flag]; got != f.want {
			t.Errorf("loadgen: --%s = %q, want %q", f.flag, got, f.want)
		}
	}

	out := flags["out"]
	if !slices.Contains(s.Volumes, "./loadgen-report:"+out) {
		t.Errorf("loadgen: volumes = %q, want ./loadgen-report mounted on --out %q", s.Volumes, out)
	}
	for _, name := range shops {
		if got := s.DependsOn[name].Condition; got != "service_healthy" {
			t.Errorf("loadgen: depends_on %s: condition = %q, want service_healthy", name, got)
		}
	}
}

// A service can wait for another to be healthy only if that one has a health
// check; otherwise docker compose up refuses to start it.
func TestComposeDependsOnHealthy(t *testing.T) {
	c := loadCompose(t)
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		for dep, d := range c.Services[name].DependsOn {
			target, ok := c.Services[dep]
			switch {
			case !ok:
				t.Errorf("%s: depends_on %q, which is not a service", name, dep)
			case d.Condition == "service_healthy" && target.Healthcheck == nil:
				t.Errorf("%s: waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
			}
		}
	}
}

// Only the shop front door and Grafana are published, and only on
// loopback; MySQL, Redis, etcd and Prometheus stay on the compose network.
func TestComposePorts(t *testing.T) {
	c := loadCompose(t)
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		ports := c.Services[name].Ports
		if len(ports) > 0 && !slices.Contains(slices.Concat(shops, failoverShops, clusterShops), name) && name != "grafana" {
			t.Errorf("%s: ports = %q, want none published", name, ports)
		}
		for _, p := range ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s: port %q is published on every interface, want 127.0.0.1 only", name, p)
			}
		}
	}
	if g := c.Services["grafana"].Ports; len(g) != 1 || !strings.HasSuffix(g[0], ":3000") {
		t.Errorf("grafana: ports = %q, want its port 3000 on loopback", g)
	}
	if len(c.Services[shops[0]].Ports) == 0 {
		t.Errorf("%s: no port published: nothing for a user to curl", shops[0])
	}
}

// checkShopProbe checks a shop's health check: exec form (CMD), a program
// the shop's image has (a binary the Dockerfile installs, or busybox wget on
// an Alpine base), and a URL on the shop's own port.
func checkShopProbe(t *testing.T, shop string, hc []string, port string) {
	t.Helper()
	if len(hc) < 2 || hc[0] != "CMD" {
		t.Errorf("%s: healthcheck = %q, want exec form [CMD program args...]", shop, hc)
		return
	}
	stages := loadDockerfile(t)
	base := stages[len(stages)-1].image
	switch prog := hc[1]; {
	case installedBinaries(t)[prog]:
		return // the shop's own probe: its arguments are its business
	case prog == "wget" && (strings.HasPrefix(base, "alpine") || strings.HasPrefix(base, "busybox")):
	default:
		t.Errorf("%s: healthcheck runs %q, which the image (FROM %s) does not have", shop, prog, base)
		return
	}
	url := hc[len(hc)-1]
	if url != "http://127.0.0.1:"+port+"/readyz" && url != "http://127.0.0.1:"+port+"/healthz" {
		t.Errorf("%s: healthcheck probes %q, want http://127.0.0.1:%s/readyz (or /healthz)", shop, url, port)
	}
}

// shopPort is the port a shop service listens on inside its container.
func shopPort(s service) string {
	_, port, err := net.SplitHostPort(s.Environment["SHOP_ADDR"])
	if err != nil {
		return "8080" // the shop's default --addr
	}
	return port
}

// etcdEndpoints is the SHOP_ETCD value the members defined in c call for:
// the host:port of each one's advertised client URL.
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
func option(args []string, name string) (string, bool) {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

// parseFlags maps flag names to values in the "--name=value", "--name value"
// and "--name" (true) forms.
func parseFlags(args []string) map[string]string {
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		name := strings.TrimLeft(args[i], "-")
		if n, v, ok := strings.Cut(name, "="); ok {
			flags[n] = v
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			flags[name] = args[i+1]
			i++
		} else {
			flags[name] = "true"
		}
	}
	return flags
}

func healthTest(s service) []string {
	if s.Healthcheck == nil {
		return nil
	}
	return s.Healthcheck.Test
}
