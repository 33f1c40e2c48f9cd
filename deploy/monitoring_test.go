package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// Prometheus scrapes exactly the three shops, on the port they listen on,
// at /metrics; Grafana gets the provisioning and the dashboard from the
// repository, and the dashboard's queries use the provisioned data source.
// (That every query names a metric a shop exports is checked against a
// live /metrics, in internal/app.)
func TestComposeMonitoring(t *testing.T) {
	c := loadCompose(t)
	prom, graf := c.Services["prometheus"], c.Services["grafana"]
	for _, s := range []service{prom, graf} {
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if _, err := os.Stat(src); err != nil {
				t.Errorf("volume %q: %v", v, err)
			}
		}
	}
	if d := graf.DependsOn["prometheus"].Condition; d != "service_healthy" || prom.Healthcheck == nil {
		t.Errorf("grafana: depends_on prometheus %q, prometheus healthcheck %v: want Grafana to start on a ready Prometheus", d, prom.Healthcheck)
	}

	var cfg struct {
		ScrapeConfigs []struct {
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "deploy/prometheus/prometheus.yml", &cfg)
	var targets []string
	for _, sc := range cfg.ScrapeConfigs {
		if sc.MetricsPath != "/metrics" {
			t.Errorf("prometheus.yml: metrics_path %q, want /metrics", sc.MetricsPath)
		}
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	var want []string
	for _, name := range shops {
		want = append(want, name+":"+shopPort(c.Services[name]))
	}
	if slices.Sort(targets); !slices.Equal(targets, want) {
		t.Errorf("prometheus.yml: targets %q, want the three shops %q", targets, want)
	}

	var ds struct {
		Datasources []struct {
			UID string `yaml:"uid"`
			URL string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, "deploy/grafana/provisioning/datasources/prometheus.yaml", &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].URL != "http://prometheus:9090" {
		t.Fatalf("grafana data sources: %+v, want one, compose's Prometheus", ds.Datasources)
	}
	uid := ds.Datasources[0].UID
	for _, p := range dashboardPanels(t) {
		if p.Datasource.UID != uid {
			t.Errorf("panel %q: data source %q, want the provisioned %q", p.Title, p.Datasource.UID, uid)
		}
		for _, q := range p.Targets {
			if q.Datasource.UID != uid {
				t.Errorf("panel %q, query %s: data source %q, want %q", p.Title, q.RefID, q.Datasource.UID, uid)
			}
		}
	}
}

type panel struct {
	Title      string `json:"title"`
	Datasource struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
}

// dashboardPanels reads the dashboard compose's Grafana loads.
func dashboardPanels(t *testing.T) []panel {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("deploy", "grafana", "dashboards", "flashsale.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("flashsale.json: %v", err)
	}
	if len(d.Panels) == 0 {
		t.Fatal("flashsale.json: no panels")
	}
	return d.Panels
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
