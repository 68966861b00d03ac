package charttest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The four alerts of files/prometheus-rules.yaml.
var alertNames = []string{"ArbiterUnansweredCallsAtClose", "ArbiterFailClosedCancels", "ArbiterStoreErrors", "ArbiterPanics"}

// TestObservabilityOffByDefault: neither the PrometheusRule nor the dashboard
// ConfigMap renders unless asked for.
func TestObservabilityOffByDefault(t *testing.T) {
	m := mustRender(t, nil)
	none[*monitoringv1.PrometheusRule](t, m)
	for _, cm := range all[*corev1.ConfigMap](m) {
		if strings.HasSuffix(cm.Name, "-dashboard") {
			t.Errorf("dashboard ConfigMap %s rendered by default", cm.Name)
		}
	}
}

// TestPrometheusRule: metrics.prometheusRule renders the alerts of
// files/prometheus-rules.yaml, decoded strictly into the Prometheus Operator's type:
// each on this release's series (the job label is the Service the ServiceMonitor
// scrapes), the threshold put in, the extra alert labels merged over none of the
// alert's own, Prometheus's own templates untouched, disabled alerts left out. (That
// the expressions name metrics the server registers is checked in the main module:
// server/chartmetrics_test.go.)
func TestPrometheusRule(t *testing.T) {
	m := mustRender(t, yamlValues(t, `
metrics:
  serviceMonitor:
    enabled: true
  prometheusRule:
    enabled: true
    labels:
      release: kube-prometheus-stack
    alertLabels:
      team: voice
      severity: page
    failClosedRatio: 0.35
`))
	pr := only[*monitoringv1.PrometheusRule](t, m)
	if pr.Name != "arbiter" || pr.Labels["release"] != "kube-prometheus-stack" || pr.Labels["app.kubernetes.io/name"] != "arbiter" {
		t.Errorf("PrometheusRule %s labels %v", pr.Name, pr.Labels)
	}
	svc := only[*monitoringv1.ServiceMonitor](t, m)
	var names []string
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			expr := r.Expr.String()
			if want := `namespace="` + releaseNS + `", job="` + svc.Name + `"`; !strings.Contains(expr, want) {
				t.Errorf("%s: expr %q is not scoped to %s", r.Alert, expr, want)
			}
			if strings.Contains(expr, "__") {
				t.Errorf("%s: a placeholder is left in %q", r.Alert, expr)
			}
			if r.Labels["team"] != "voice" || r.Labels["severity"] == "page" || r.Labels["severity"] == "" {
				t.Errorf("%s: labels %v (the alert's own severity wins over alertLabels)", r.Alert, r.Labels)
			}
			if !strings.Contains(r.Annotations["description"], "{{ $labels.namespace }}/{{ $labels.job }}") {
				t.Errorf("%s: description %q lost its Prometheus templates", r.Alert, r.Annotations["description"])
			}
			if r.Alert == "ArbiterFailClosedCancels" && !strings.Contains(expr, ") > 0.35") {
				t.Errorf("threshold not in %q", expr)
			}
		}
	}
	if !slices.Equal(names, alertNames) {
		t.Errorf("alerts %v, want %v", names, alertNames)
	}

	m = mustRender(t, yamlValues(t, "metrics:\n  prometheusRule:\n    enabled: true\n    disabled: [ArbiterPanics, ArbiterStoreErrors]"))
	names = nil
	for _, g := range only[*monitoringv1.PrometheusRule](t, m).Spec.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
		}
	}
	if !slices.Equal(names, alertNames[:2]) {
		t.Errorf("with two disabled: %v", names)
	}
}

// TestDashboardConfigMap: metrics.dashboard renders files/dashboard.json, verbatim, in
// a ConfigMap with the Grafana sidecar's label (and the folder annotation and
// namespace when set).
func TestDashboardConfigMap(t *testing.T) {
	m := mustRender(t, yamlValues(t, `
metrics:
  dashboard:
    enabled: true
    annotations:
      grafana_folder: Voice
    namespace: monitoring
`))
	var cm *corev1.ConfigMap
	for _, c := range all[*corev1.ConfigMap](m) {
		if c.Name == "arbiter-dashboard" {
			cm = c
		}
	}
	if cm == nil {
		t.Fatalf("no arbiter-dashboard ConfigMap: %v", m.kinds())
	}
	if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "Voice" || cm.Namespace != "monitoring" {
		t.Errorf("ConfigMap labels %v annotations %v namespace %q", cm.Labels, cm.Annotations, cm.Namespace)
	}
	got := cm.Data["arbiter.json"]
	if want := strings.TrimSuffix(string(readFile(t, chartDir+"/files/dashboard.json")), "\n"); got != want {
		t.Errorf("arbiter.json is not files/dashboard.json verbatim")
	}
	var dash struct {
		UID, Title string
		Panels     []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(got), &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	exprs := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if q.Expr == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			exprs++
		}
	}
	if dash.UID != "arbiter" || exprs < 20 {
		t.Errorf("dashboard uid %q with %d queries", dash.UID, exprs)
	}
}

// TestObservabilitySchema: the schema refuses what would not work.
func TestObservabilitySchema(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"rule without metrics", "metrics:\n  enabled: false\n  prometheusRule:\n    enabled: true", "prometheusRule"},
		{"dashboard without metrics", "metrics:\n  enabled: false\n  dashboard:\n    enabled: true", "dashboard"},
		{"ratio above 1", "metrics:\n  prometheusRule:\n    enabled: true\n    failClosedRatio: 20", "failClosedRatio"},
		{"unknown alert", "metrics:\n  prometheusRule:\n    enabled: true\n    disabled: [ArbiterDown]", "disabled"},
		{"label not a string", "metrics:\n  dashboard:\n    enabled: true\n    labels:\n      grafana_dashboard: 1", "grafana_dashboard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(t, yamlValues(t, tc.doc), renderOpts{})
			if err == nil || !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("values %q: err = %v, want a schema error naming %q", tc.doc, err, tc.want)
			}
		})
	}
}

// TestDebugPages: the session pages are off by default (the metrics port is open to
// every scraper and the page shows transcripts), on with metrics.debugPages, and not
// passed at all without the metrics listener they live on.
func TestDebugPages(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want string // the --debug-pages argument, "" for none
	}{
		{"", "--debug-pages=false"},
		{"metrics.debugPages=true", "--debug-pages=true"},
		{"metrics.enabled=false,metrics.debugPages=true", ""},
	} {
		var sets []string
		if tc.set != "" {
			sets = append(sets, tc.set)
		}
		c := container(t, only[*appsv1.Deployment](t, mustRender(t, values(t, nil, sets...))))
		var got string
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--debug-pages") {
				got = a
			}
		}
		if got != tc.want {
			t.Errorf("%q: --debug-pages argument = %q, want %q", tc.set, got, tc.want)
		}
	}
}
