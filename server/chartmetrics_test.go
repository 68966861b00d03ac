package server_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voicearbiter/arbiter/server"
)

// The chart's dashboard and alerts (deploy/helm/arbiter/files) query the server's
// metrics by name: this test fails when one of them names a metric, or a label of
// one, that the server does not register.
const chartFiles = "../deploy/helm/arbiter/files/"

// targetLabels are the labels Prometheus adds to every scraped series (the
// ServiceMonitor's target labels), beside the metrics' own.
var targetLabels = []string{"namespace", "job", "pod", "instance", "service", "container", "endpoint"}

// registered maps every series name the server's registry can expose to its labels:
// a histogram's _bucket (with le), _sum and _count.
func registered(t *testing.T) map[string][]string {
	t.Helper()
	m := server.NewMetrics()
	ch := make(chan *prometheus.Desc, 256)
	go func() { m.Registry.Describe(ch); close(ch) }()
	nameRE := regexp.MustCompile(`fqName: "([^"]+)"`)
	labelsRE := regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
	constRE := regexp.MustCompile(`constLabels: \{([^}]*)\}`)
	out := map[string][]string{}
	for d := range ch {
		s := d.String()
		n := nameRE.FindStringSubmatch(s)
		if n == nil {
			t.Fatalf("cannot read %s", s)
		}
		var labels []string
		for _, re := range []*regexp.Regexp{labelsRE, constRE} {
			if l := re.FindStringSubmatch(s); l != nil {
				for _, f := range strings.Split(l[1], ",") {
					if k, _, _ := strings.Cut(strings.TrimSpace(f), "="); k != "" {
						labels = append(labels, strings.Trim(k, `"`))
					}
				}
			}
		}
		out[n[1]] = labels
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			out[n[1]+suffix] = append(slices.Clone(labels), "le")
		}
	}
	return out
}

// chartExprs are the PromQL expressions of the dashboard's panels and the alert rules.
func chartExprs(t *testing.T) map[string]string {
	t.Helper()
	exprs := map[string]string{}
	var dash any
	if err := json.Unmarshal(mustRead(t, chartFiles+"dashboard.json"), &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "expr" {
					exprs["dashboard "+path] = s
				}
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range v {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	walk("", dash)
	rules := strings.NewReplacer("__SELECTOR__", `namespace="voice", job="arbiter"`, "__FAIL_CLOSED_RATIO__", "0.2").
		Replace(string(mustRead(t, chartFiles+"prometheus-rules.yaml")))
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr string
			}
		}
	}
	if err := yaml.Unmarshal([]byte(rules), &doc); err != nil {
		t.Fatalf("prometheus-rules.yaml: %v", err)
	}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	return exprs
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChartQueriesRegisteredMetrics: every metric a dashboard panel or an alert
// selects is registered by the server (NewMetrics), and every label it matches on or
// groups by is one of that metric's labels or a target label.
func TestChartQueriesRegisteredMetrics(t *testing.T) {
	reg := registered(t)
	exprs := chartExprs(t)
	if len(exprs) < 20 {
		t.Fatalf("only %d expressions found in the chart's files", len(exprs))
	}
	alerts := 0
	selector := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	matcher := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	grouping := regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	for where, e := range exprs {
		if strings.HasPrefix(where, "alert ") {
			alerts++
		}
		sels := selector.FindAllStringSubmatch(e, -1)
		if len(sels) == 0 {
			t.Errorf("%s: no metric selector in %q", where, e)
		}
		var labels []string
		for _, s := range sels {
			name := s[1]
			own, ok := reg[name]
			if !ok {
				t.Errorf("%s: metric %s is not registered by the server (%q)", where, name, e)
				continue
			}
			labels = append(labels, own...)
			for _, m := range matcher.FindAllStringSubmatch(s[2], -1) {
				if !slices.Contains(own, m[1]) && !slices.Contains(targetLabels, m[1]) {
					t.Errorf("%s: %s has no label %s (its labels: %v)", where, name, m[1], own)
				}
			}
		}
		for _, g := range grouping.FindAllStringSubmatch(e, -1) {
			for _, l := range strings.Split(g[1], ",") {
				if l = strings.TrimSpace(l); l != "" && !slices.Contains(labels, l) && !slices.Contains(targetLabels, l) {
					t.Errorf("%s: groups by %s, which none of its metrics has (%q)", where, l, e)
				}
			}
		}
	}
	if alerts != 4 {
		t.Errorf("%d alerts, want 4", alerts)
	}
}
