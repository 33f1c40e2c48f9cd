package deploy_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

var zkMembers = []string{"zk1", "zk2", "zk3"}

// TestComposeZooKeeper: the three members form one ensemble (each its own
// id, all the same server list naming all three with their client port),
// each has a health check, and every shop that has SHOP_ZOOKEEPER names
// all three and waits for them to be healthy.
func TestComposeZooKeeper(t *testing.T) {
	c := loadCompose(t)
	var servers string
	ids := map[string]bool{}
	for i, name := range zkMembers {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("compose.yaml: service %q missing", name)
		}
		if !strings.HasPrefix(s.Image, "zookeeper:3.") {
			t.Errorf("%s: image = %q, want the official zookeeper:3.* image", name, s.Image)
		}
		if id := s.Environment["ZOO_MY_ID"]; id != fmt.Sprint(i+1) || ids[id] {
			t.Errorf("%s: ZOO_MY_ID = %q, want %d, unique", name, id, i+1)
		}
		ids[s.Environment["ZOO_MY_ID"]] = true
		if i == 0 {
			servers = s.Environment["ZOO_SERVERS"]
		}
		if got := s.Environment["ZOO_SERVERS"]; got != servers {
			t.Errorf("%s: ZOO_SERVERS = %q, want %s's %q: they would not form one ensemble", name, got, zkMembers[0], servers)
		}
		if want := fmt.Sprintf("server.%d=%s:2888:3888;2181", i+1, name); !slices.Contains(strings.Fields(servers), want) {
			t.Errorf("ZOO_SERVERS %q does not name %s (%s)", servers, name, want)
		}
		if len(healthTest(s)) == 0 {
			t.Errorf("%s: no healthcheck: the shops would start before the ensemble has a quorum", name)
		}
	}
	want := "zk1:2181,zk2:2181,zk3:2181"
	n := 0
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		s := c.Services[name]
		got, ok := s.Environment["SHOP_ZOOKEEPER"]
		if !ok {
			continue
		}
		n++
		if got != want {
			t.Errorf("%s: SHOP_ZOOKEEPER = %q, want %q", name, got, want)
		}
		for _, dep := range zkMembers {
			if cond := s.DependsOn[dep].Condition; cond != "service_healthy" {
				t.Errorf("%s: depends_on %s: condition = %q, want service_healthy", name, dep, cond)
			}
		}
	}
	for _, name := range shops {
		if _, ok := c.Services[name].Environment["SHOP_ZOOKEEPER"]; !ok {
			t.Errorf("%s: SHOP_ZOOKEEPER unset: its zookeeper products cannot be sold", name)
		}
	}
	if n == 0 {
		t.Error("no service has SHOP_ZOOKEEPER")
	}
}
