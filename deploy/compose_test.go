// Package deploy_test checks the deployment files, compose.yaml and the
// Dockerfile at the repository's root and the configuration under deploy/,
// by reading them: the machines that run these tests cannot start
// containers. It checks what breaks
// silently when code and deployment drift apart: a renamed flag, a Redis node
// missing from a list, a health check that nothing in the image can run.
//
// The tests run in the module's root (TestMain changes there), so a path
// reads as compose.yaml writes it: "deploy/prometheus/prometheus.yml".
package deploy_test

import (
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
