package deploy_test

import (
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
)

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
