package charttest

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const (
	grpcPort    = 50051
	metricsPort = 9090
	healthPort  = 8081
	arbiterSvc  = "arbiter.v1.ArbiterService"
)

// TestLint is `helm lint` (and `helm lint -f values-production.yaml`): no message at
// warning level or above. Lint also validates values.yaml against values.schema.json.
func TestLint(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals map[string]any
	}{
		{"default", nil},
		{"production", values(t, []string{productionFile})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lint.All(chartDir, tc.vals, releaseNS, false)
			for _, m := range l.Messages {
				t.Logf("lint: %s", m)
				if m.Severity >= support.WarningSev {
					t.Errorf("lint %s", m)
				}
			}
		})
	}
}

// TestLintCatchesBrokenChart proves the lint test can fail: the same linter on a
// chart whose values break the schema reports an error.
func TestLintCatchesBrokenChart(t *testing.T) {
	l := lint.All(chartDir, yamlValues(t, "replicaCount: three"), releaseNS, false)
	if l.HighestSeverity < support.ErrorSev {
		t.Fatalf("lint with replicaCount: three passed: %v", l.Messages)
	}
}

// TestDefaultValues renders the chart as `helm template` with no values: a single pod
// on the embedded store.
func TestDefaultValues(t *testing.T) {
	m := mustRender(t, nil)
	t.Logf("objects: %v", m.kinds())
	want := []string{
		"ConfigMap/arbiter-tools", "Deployment/arbiter", "Service/arbiter",
		"Service/arbiter-headless", "ServiceAccount/arbiter",
	}
	if got := m.kinds(); !slices.Equal(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	d := only[*appsv1.Deployment](t, m)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1 without Redis", d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy = %s, want Recreate (one pod owns the embedded store)", d.Spec.Strategy.Type)
	}
	c := container(t, d)
	if want := "registry.example.com/voicearbiter/arbiter:0.1.0"; c.Image != want {
		t.Errorf("image = %q, want %q (appVersion)", c.Image, want)
	}
	if env := envNamed(c, "ARBITER_REDIS_URL"); env != nil {
		t.Errorf("ARBITER_REDIS_URL set without Redis: %v", env)
	}
	for _, a := range []string{"--listen=:50051", "--tools=/etc/arbiter/tools/tools.yaml", "--log-format=json", "--drain-timeout=10s", "--metrics-listen=:9090", "--debug-pages=false"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %q", c.Args, a)
		}
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--auth-tokens-file") || strings.HasPrefix(a, "--tls-") {
			t.Errorf("arg %q without auth/TLS enabled", a)
		}
	}
	checkGRPCProbes(t, c)
	checkPodSecurity(t, d)
	checkResources(t, c)
	checkTermination(t, d, 10)
	checkWiring(t, m)
	if !strings.Contains(m.notes, "embedded") {
		t.Errorf("NOTES.txt does not warn about the embedded store:\n%s", m.notes)
	}
}

// TestProductionValues renders deploy/helm/values-production.yaml: Redis from a
// Secret, auth, mutual TLS, HPA, PDB, ServiceMonitor, alerts, dashboard, NetworkPolicy.
func TestProductionValues(t *testing.T) {
	m := mustRender(t, values(t, []string{productionFile}))
	t.Logf("objects: %v", m.kinds())
	want := []string{
		"ConfigMap/arbiter-dashboard", "ConfigMap/arbiter-tools", "Deployment/arbiter", "HorizontalPodAutoscaler/arbiter",
		"NetworkPolicy/arbiter", "PodDisruptionBudget/arbiter", "PrometheusRule/arbiter", "Service/arbiter",
		"Service/arbiter-headless", "ServiceAccount/arbiter", "ServiceMonitor/arbiter",
	}
	if got := m.kinds(); !slices.Equal(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	d := only[*appsv1.Deployment](t, m)
	if d.Spec.Replicas != nil {
		t.Errorf("replicas = %d with the HPA on: the HPA owns the count", *d.Spec.Replicas)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("strategy = %s", toYAML(d.Spec.Strategy))
	}
	c := container(t, d)
	env := envNamed(c, "ARBITER_REDIS_URL")
	if env == nil || env.Value != "" || env.ValueFrom == nil || env.ValueFrom.SecretKeyRef == nil ||
		env.ValueFrom.SecretKeyRef.Name != "arbiter-redis" || env.ValueFrom.SecretKeyRef.Key != "redis-url" {
		t.Errorf("ARBITER_REDIS_URL = %s, want secretKeyRef arbiter-redis/redis-url", toYAML(env))
	}
	for _, a := range []string{
		"--auth-tokens-file=/etc/arbiter/auth/tokens.yaml", "--tls-cert=/etc/arbiter/tls/tls.crt",
		"--tls-key=/etc/arbiter/tls/tls.key", "--tls-client-ca=/etc/arbiter/tls-client-ca/ca.crt",
		"--drain-timeout=15s", "--metrics-listen=:9090",
	} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %q", c.Args, a)
		}
	}
	checkSecretVolume(t, d, "/etc/arbiter/auth/tokens.yaml", "arbiter-auth-tokens", "tokens.yaml")
	checkSecretVolume(t, d, "/etc/arbiter/tls/tls.crt", "arbiter-tls", "tls.crt")
	checkSecretVolume(t, d, "/etc/arbiter/tls/tls.key", "arbiter-tls", "tls.key")
	checkSecretVolume(t, d, "/etc/arbiter/tls-client-ca/ca.crt", "arbiter-tls", "ca.crt")

	// The kubelet's native gRPC probe cannot do TLS: it asks the plaintext health port.
	checkGRPCProbes(t, c)
	checkPodSecurity(t, d)
	checkResources(t, c)
	checkTermination(t, d, 15)
	checkWiring(t, m)

	// Hard anti-affinity: one pod per node.
	aa := d.Spec.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("anti-affinity = %s", toYAML(aa))
	} else {
		sel := aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector
		mustSelect(t, "anti-affinity", sel.MatchLabels, d.Spec.Template.Labels)
	}

	pdb := only[*policyv1.PodDisruptionBudget](t, m)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("PDB = %s, want minAvailable 2 only", toYAML(pdb.Spec))
	}

	hpa := only[*autoscalingv2.HorizontalPodAutoscaler](t, m)
	if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != d.Name ||
		hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas != 3 || hpa.Spec.MaxReplicas != 10 {
		t.Errorf("HPA = %s", toYAML(hpa.Spec))
	}
	if len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource == nil || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
		*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 60 {
		t.Errorf("HPA metrics = %s", toYAML(hpa.Spec.Metrics))
	}

	np := only[*networkingv1.NetworkPolicy](t, m)
	mustSelect(t, "NetworkPolicy", np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels)
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Errorf("NetworkPolicy does not restrict egress: %v", np.Spec.PolicyTypes)
	}
	ingressPorts := map[string]bool{}
	for _, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			ingressPorts[p.Port.String()] = true
		}
	}
	if !ingressPorts["grpc"] || !ingressPorts["metrics"] || len(ingressPorts) != 2 {
		t.Errorf("NetworkPolicy ingress ports = %v, want grpc and metrics", ingressPorts)
	}
	egressPorts := map[string]bool{}
	for _, r := range np.Spec.Egress {
		for _, p := range r.Ports {
			egressPorts[fmt.Sprintf("%s/%s", p.Port.String(), *p.Protocol)] = true
		}
	}
	for _, p := range []string{"53/UDP", "53/TCP", "6379/TCP"} {
		if !egressPorts[p] {
			t.Errorf("NetworkPolicy egress lacks %s: %v", p, egressPorts)
		}
	}

	sm := only[*monitoringv1.ServiceMonitor](t, m)
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" ||
		string(sm.Spec.Endpoints[0].Interval) != "15s" {
		t.Errorf("ServiceMonitor endpoints = %s", toYAML(sm.Spec.Endpoints))
	}
	if sm.Labels["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels = %v", sm.Labels)
	}
	// It selects the main Service (which has the metrics port) and not the headless one.
	smSel, err := metav1LabelSelector(sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all[*corev1.Service](m) {
		got := smSel.Matches(labels.Set(s.Labels))
		want := s.Spec.ClusterIP != corev1.ClusterIPNone
		if got != want {
			t.Errorf("ServiceMonitor selects Service %s = %v, want %v", s.Name, got, want)
		}
		if want && servicePort(s, "metrics") == nil {
			t.Errorf("Service %s selected by the ServiceMonitor has no metrics port", s.Name)
		}
	}
	// The schemaless view agrees (apiVersion/kind as the Prometheus Operator reads them).
	u := toUnstructured(t, sm)
	if av, _, _ := unstructuredString(u.Object, "apiVersion"); av != "monitoring.coreos.com/v1" {
		t.Errorf("ServiceMonitor apiVersion = %q", av)
	}

	if !strings.Contains(m.notes, "Redis") || !strings.Contains(m.notes, "TLS") {
		t.Errorf("NOTES.txt:\n%s", m.notes)
	}
}

// TestReplicasWithRedis: with Redis and no explicit replicaCount, 3 replicas, a PDB
// with maxUnavailable 1, soft anti-affinity, gRPC probes.
func TestReplicasWithRedis(t *testing.T) {
	m := mustRender(t, values(t, nil, "redis.enabled=true,redis.existingSecret=r"))
	d := only[*appsv1.Deployment](t, m)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want 3 by default with Redis", d.Spec.Replicas)
	}
	pdb := only[*policyv1.PodDisruptionBudget](t, m)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PDB = %s, want maxUnavailable 1", toYAML(pdb.Spec))
	}
	mustSelect(t, "PDB", pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	aa := d.Spec.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("anti-affinity = %s, want one preferred term", toYAML(aa))
	}
	checkGRPCProbes(t, container(t, d))
	none[*autoscalingv2.HorizontalPodAutoscaler](t, m)

	m = mustRender(t, values(t, nil, "redis.enabled=true,redis.existingSecret=r,replicaCount=5,podDisruptionBudget.minAvailable=60%"))
	d = only[*appsv1.Deployment](t, m)
	if *d.Spec.Replicas != 5 {
		t.Errorf("replicas = %d, want 5", *d.Spec.Replicas)
	}
	pdb = only[*policyv1.PodDisruptionBudget](t, m)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.String() != "60%" || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("PDB = %s, want minAvailable 60%%", toYAML(pdb.Spec))
	}
}

// TestEmbeddedStoreRefusesReplicas: more than one pod without Redis fails — in the
// schema (helm install/template/lint) and, with the schema skipped
// (--skip-schema-validation), in the template itself.
func TestEmbeddedStoreRefusesReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  string
		want string // in the template's fail message
	}{
		{"replicas", "replicaCount=2", "needs redis.enabled=true"},
		{"autoscaling", "autoscaling.enabled=true", "autoscaling.enabled needs redis.enabled=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := values(t, nil, tc.set)
			_, err := renderChart(t, vals, renderOpts{})
			if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
				t.Errorf("with schema: err = %v, want a schema error", err)
			}
			_, err = renderChart(t, vals, renderOpts{skipSchema: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("without schema: err = %v, want the template's fail %q", err, tc.want)
			}
		})
	}
	// One replica, explicitly, is fine.
	d := only[*appsv1.Deployment](t, mustRender(t, values(t, nil, "replicaCount=1")))
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %d", *d.Spec.Replicas)
	}
}

// TestSchemaRejects: values.schema.json refuses wrong types, unknown keys and unsafe
// settings, naming the field.
func TestSchemaRejects(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"replicas as a word", `replicaCount: three`, "replicaCount"},
		{"replicas as a string number", `replicaCount: "3"`, "replicaCount"},
		{"misspelled key", `replicas: 3`, "replicas"},
		{"unknown nested key", "server:\n  drainTimeout: 10s", "drainTimeout"},
		{"drain as a duration string", "server:\n  drainTimeoutSeconds: 10s", "drainTimeoutSeconds"},
		{"bad Go duration", "server:\n  idleTTL: 1 hour", "idleTTL"},
		{"port as a string", "metrics:\n  port: \"9090\"", "port"},
		{"port out of range", "server:\n  port: 70000", "port"},
		{"pull policy", "image:\n  pullPolicy: Sometimes", "pullPolicy"},
		{"writable root fs", "securityContext:\n  readOnlyRootFilesystem: false", "readOnlyRootFilesystem"},
		{"root", "podSecurityContext:\n  runAsNonRoot: false", "runAsNonRoot"},
		{"log format", "server:\n  logFormat: xml", "logFormat"},
		{"redis without secret", "redis:\n  enabled: true", "existingSecret"},
		{"auth without secret", "auth:\n  enabled: true", "existingSecret"},
		{"mTLS without TLS", "tls:\n  clientCA:\n    enabled: true", "enabled"},
		{"PDB not a count or percentage", "podDisruptionBudget:\n  minAvailable: half", "minAvailable"},
		{"probe type", "probes:\n  type: http", "type"},
		{"anti-affinity", "podAntiAffinity: always", "podAntiAffinity"},
		{"service monitor without metrics", "metrics:\n  enabled: false\n  serviceMonitor:\n    enabled: true", "serviceMonitor"},
		{"extra arg not a flag", "server:\n  extraArgs: [\"serve\"]", "extraArgs"},
		{"message size with a unit", "server:\n  maxMsgSize: 1MiB", "maxMsgSize"},
		{"negative rate limit", "server:\n  rateLimit: -1", "rateLimit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(t, yamlValues(t, tc.doc), renderOpts{})
			if err == nil {
				t.Fatalf("values %q accepted", tc.doc)
			}
			if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("values %q: err = %v, want a schema error naming %q", tc.doc, err, tc.want)
			}
		})
	}
}

// TestToolsChecksum: the pod template's checksum/tools annotation is the tool
// policy's hash, so a policy change rolls the pods and nothing else does.
func TestToolsChecksum(t *testing.T) {
	sum := func(sets ...string) string {
		t.Helper()
		d := only[*appsv1.Deployment](t, mustRender(t, values(t, nil, sets...)))
		s := d.Spec.Template.Annotations["checksum/tools"]
		if len(s) != 64 {
			t.Fatalf("checksum/tools = %q, want a sha256", s)
		}
		return s
	}
	base := sum()
	if again := sum(); again != base {
		t.Errorf("checksum not deterministic: %s vs %s", base, again)
	}
	if other := sum("tools.policy=tools: []\nunknown_tools: reject\n"); other == base {
		t.Errorf("checksum did not change with the tool policy")
	}
	if other := sum("resources.limits.memory=1Gi"); other != base {
		t.Errorf("checksum changed with an unrelated value")
	}
	// The ConfigMap carries the policy verbatim under tools.yaml.
	m := mustRender(t, values(t, nil, "tools.policy=tools: []\nunknown_tools: reject\n"))
	cm := only[*corev1.ConfigMap](t, m)
	if got := cm.Data["tools.yaml"]; got != "tools: []\nunknown_tools: reject\n" {
		t.Errorf("tools.yaml = %q", got)
	}
	// A policy from a ConfigMap the operator manages: no ConfigMap, no checksum.
	m = mustRender(t, values(t, nil, "tools.existingConfigMap=my-tools"))
	none[*corev1.ConfigMap](t, m)
	d := only[*appsv1.Deployment](t, m)
	if _, ok := d.Spec.Template.Annotations["checksum/tools"]; ok {
		t.Errorf("checksum/tools set for an external ConfigMap")
	}
	if v := volumeNamed(t, d, "tools"); v == nil || v.ConfigMap == nil || v.ConfigMap.Name != "my-tools" {
		t.Errorf("tools volume = %s", toYAML(v))
	}
}

// TestTerminationGrace: terminationGracePeriodSeconds always exceeds preStop sleep +
// drain, for any drain the values give, and --drain-timeout matches.
func TestTerminationGrace(t *testing.T) {
	for _, drain := range []int{1, 10, 45, 120} {
		for _, sleep := range []int{0, 5} {
			d := only[*appsv1.Deployment](t, mustRender(t, values(t, nil,
				fmt.Sprintf("server.drainTimeoutSeconds=%d,server.preStopSleepSeconds=%d", drain, sleep))))
			c := container(t, d)
			if !slices.Contains(c.Args, fmt.Sprintf("--drain-timeout=%ds", drain)) {
				t.Errorf("drain %d: args %q", drain, c.Args)
			}
			checkTermination(t, d, drain)
			hasHook := c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil
			if hasHook != (sleep > 0) || (hasHook && c.Lifecycle.PreStop.Sleep.Seconds != int64(sleep)) {
				t.Errorf("preStop sleep %d: lifecycle = %s", sleep, toYAML(c.Lifecycle))
			}
		}
	}
}

// TestProbesUnderTLS: with TLS on the gRPC port (and mutual TLS), the probes are still
// the kubelet's gRPC probes, on the plaintext health port, so readiness sees a store
// outage and the drain; the health port is not in the Service.
func TestProbesUnderTLS(t *testing.T) {
	for _, sets := range []string{
		"tls.enabled=true,tls.existingSecret=t",
		"tls.enabled=true,tls.existingSecret=t,tls.clientCA.enabled=true",
		"tls.enabled=true,tls.existingSecret=t,probes.type=grpc",
	} {
		m := mustRender(t, values(t, nil, sets))
		d := only[*appsv1.Deployment](t, m)
		c := container(t, d)
		if !slices.Contains(c.Args, "--tls-cert=/etc/arbiter/tls/tls.crt") {
			t.Fatalf("%s: no TLS in args %q", sets, c.Args)
		}
		checkGRPCProbes(t, c)
		for _, s := range all[*corev1.Service](m) {
			for _, p := range s.Spec.Ports {
				if p.TargetPort.String() == "health" || p.Port == healthPort {
					t.Errorf("%s: Service %s exposes the health port: %s", sets, s.Name, toYAML(p))
				}
			}
		}
	}
}

// TestProbeTypes: probes.type=tcp connects to the gRPC port and runs no health
// listener; probes.port moves the health port (flag, container port and probes).
func TestProbeTypes(t *testing.T) {
	c := container(t, only[*appsv1.Deployment](t, mustRender(t, values(t, nil, "probes.type=tcp"))))
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.TCPSocket == nil || p.GRPC != nil || p.TCPSocket.Port != intstr.FromString("grpc") {
			t.Errorf("probes.type=tcp: %s probe = %s, want tcpSocket on port grpc", name, toYAML(p))
		}
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--health-listen") {
			t.Errorf("probes.type=tcp: arg %q", a)
		}
	}
	if containerPort(c, "health") != nil {
		t.Errorf("probes.type=tcp: a health container port")
	}
	c = container(t, only[*appsv1.Deployment](t, mustRender(t, values(t, []string{productionFile}, "probes.type=grpc"))))
	checkGRPCProbes(t, c)

	c = container(t, only[*appsv1.Deployment](t, mustRender(t, values(t, nil, "probes.port=9999"))))
	if !slices.Contains(c.Args, "--health-listen=:9999") || c.ReadinessProbe.GRPC == nil || c.ReadinessProbe.GRPC.Port != 9999 ||
		c.StartupProbe.GRPC == nil || c.StartupProbe.GRPC.Port != 9999 {
		t.Errorf("probes.port=9999: args %q, probes %s", c.Args, toYAML([]*corev1.Probe{c.StartupProbe, c.ReadinessProbe}))
	}
	if p := containerPort(c, "health"); p == nil || p.ContainerPort != 9999 {
		t.Errorf("probes.port=9999: health container port %s", toYAML(p))
	}
	for _, set := range []string{"probes.port=50051", "probes.port=9090"} {
		if _, err := renderChart(t, values(t, nil, set), renderOpts{}); err == nil || !strings.Contains(err.Error(), "probes.port") {
			t.Errorf("%s: err = %v, want the port clash refused", set, err)
		}
	}
}

// TestKubeVersion: Chart.yaml requires Kubernetes 1.30 (the native sleep preStop
// hook), provider builds (1.30.4-gke.1) included, and the chart renders on 1.30.
func TestKubeVersion(t *testing.T) {
	c := loadChart(t)
	for v, want := range map[string]bool{
		"v1.29.9": false, "v1.30.0": true, "v1.30.4-gke.1200": true, "v1.31.2+k3s1": true, "v1.33.0": true,
	} {
		if got := chartutil.IsCompatibleRange(c.Metadata.KubeVersion, v); got != want {
			t.Errorf("kubeVersion %q accepts %s: %v, want %v", c.Metadata.KubeVersion, v, got, want)
		}
	}
	for _, vals := range []map[string]any{nil, values(t, []string{productionFile}), values(t, nil, "persistence.enabled=true")} {
		if _, err := renderChart(t, vals, renderOpts{kubeVersion: "v1.30.0"}); err != nil {
			t.Errorf("render on 1.30: %v", err)
		}
	}
}

// TestStrictDecoding proves the decoder used above rejects what the API server's
// strict field validation would: an unknown field, a misplaced one, a wrong type.
func TestStrictDecoding(t *testing.T) {
	m := mustRender(t, nil)
	var deploy string
	for name, content := range m.files {
		if path.Base(name) == "deployment.yaml" {
			deploy = content
		}
	}
	if _, err := decodeAll(deploy); err != nil {
		t.Fatalf("the rendered Deployment does not decode: %v", err)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"unknown field", "      serviceAccountName:", "      serviceAcountName:"},
		{"misplaced field", "          grpc:\n", "          grpcAction:\n"},
		{"wrong type", "terminationGracePeriodSeconds: 20", "terminationGracePeriodSeconds: twenty"},
		{"unknown kind", "kind: Deployment", "kind: Deploymnt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(deploy, tc.from) {
				t.Fatalf("rendered Deployment lacks %q", tc.from)
			}
			bad := strings.Replace(deploy, tc.from, tc.to, 1)
			if _, err := decodeAll(bad); err == nil {
				t.Fatalf("decoded with %q -> %q", tc.from, tc.to)
			} else {
				t.Logf("rejected: %v", err)
			}
		})
	}
}

// --- checks shared by the tests above ---

// podTemplate is the pod template of a workload: a Deployment or a StatefulSet.
func podTemplate(t testing.TB, w runtime.Object) *corev1.PodTemplateSpec {
	t.Helper()
	switch w := w.(type) {
	case *appsv1.Deployment:
		return &w.Spec.Template
	case *appsv1.StatefulSet:
		return &w.Spec.Template
	}
	t.Fatalf("%T is not a workload", w)
	return nil
}

// workload is the render's one workload (the Deployment, or the StatefulSet with
// persistence), failing unless there is exactly one.
func workload(t testing.TB, m *manifests) runtime.Object {
	t.Helper()
	ds, ss := all[*appsv1.Deployment](m), all[*appsv1.StatefulSet](m)
	switch {
	case len(ds) == 1 && len(ss) == 0:
		return ds[0]
	case len(ds) == 0 && len(ss) == 1:
		return ss[0]
	}
	t.Fatalf("want one Deployment or one StatefulSet, got %v", m.kinds())
	return nil
}

// container is the arbiter container of a workload (the first; sidecars follow it).
func container(t testing.TB, w runtime.Object) *corev1.Container {
	t.Helper()
	cs := podTemplate(t, w).Spec.Containers
	if len(cs) == 0 || cs[0].Name != "arbiter" {
		t.Fatalf("containers = %s, want arbiter first", toYAML(cs))
	}
	return &cs[0]
}

func envNamed(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func volumeNamed(t testing.TB, w runtime.Object, name string) *corev1.Volume {
	t.Helper()
	vs := podTemplate(t, w).Spec.Volumes
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

func servicePort(s *corev1.Service, name string) *corev1.ServicePort {
	for i := range s.Spec.Ports {
		if s.Spec.Ports[i].Name == name {
			return &s.Spec.Ports[i]
		}
	}
	return nil
}

// checkGRPCProbes: native gRPC probes on the plaintext health port (--health-listen);
// readiness asks for the arbiter service (NOT_SERVING while the store is down or
// draining), liveness and startup for "liveness" (SERVING while the process serves, so
// a Redis outage restarts nothing); the startup probe gives the start 60 s.
func checkGRPCProbes(t testing.TB, c *corev1.Container) {
	t.Helper()
	for _, p := range []struct {
		name    string
		probe   *corev1.Probe
		service string
	}{{"startup", c.StartupProbe, "liveness"}, {"readiness", c.ReadinessProbe, arbiterSvc}, {"liveness", c.LivenessProbe, "liveness"}} {
		g := p.probe
		if g == nil || g.GRPC == nil || g.TCPSocket != nil || g.HTTPGet != nil || g.Exec != nil {
			t.Errorf("%s probe = %s, want gRPC only", p.name, toYAML(g))
			continue
		}
		if g.GRPC.Port != healthPort || g.GRPC.Service == nil || *g.GRPC.Service != p.service {
			t.Errorf("%s probe = %s, want port %d service %q", p.name, toYAML(g.GRPC), healthPort, p.service)
		}
	}
	if sp := c.StartupProbe; sp != nil && sp.PeriodSeconds*sp.FailureThreshold < 60 {
		t.Errorf("startup probe allows %ds, want at least 60", sp.PeriodSeconds*sp.FailureThreshold)
	}
	if !slices.Contains(c.Args, fmt.Sprintf("--health-listen=:%d", healthPort)) {
		t.Errorf("args %q lack --health-listen=:%d", c.Args, healthPort)
	}
	if cp := containerPort(c, "grpc"); cp == nil || cp.ContainerPort != grpcPort {
		t.Errorf("container port grpc = %s", toYAML(cp))
	}
	if cp := containerPort(c, "health"); cp == nil || cp.ContainerPort != healthPort {
		t.Errorf("container port health = %s", toYAML(cp))
	}
}

func containerPort(c *corev1.Container, name string) *corev1.ContainerPort {
	for i := range c.Ports {
		if c.Ports[i].Name == name {
			return &c.Ports[i]
		}
	}
	return nil
}

// checkPodSecurity: non-root (65532, the image's USER), read-only root fs, no
// privilege escalation, every capability dropped, RuntimeDefault seccomp, no API token.
func checkPodSecurity(t testing.TB, d runtime.Object) {
	t.Helper()
	ps := podTemplate(t, d).Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != 65532 ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext = %s", toYAML(ps))
	}
	sc := container(t, d).SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("container securityContext = %s", toYAML(sc))
	}
	if a := podTemplate(t, d).Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken = %v, want false", a)
	}
}

func checkResources(t testing.TB, c *corev1.Container) {
	t.Helper()
	r := c.Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			t.Errorf("%s: request %s, limit %s", name, req.String(), lim.String())
		}
	}
	if env := envNamed(c, "GOMEMLIMIT"); env == nil || env.ValueFrom == nil || env.ValueFrom.ResourceFieldRef == nil ||
		env.ValueFrom.ResourceFieldRef.Resource != "limits.memory" {
		t.Errorf("GOMEMLIMIT = %s", toYAML(env))
	}
}

// checkTermination: the kubelet waits longer than preStop + drain before SIGKILL.
func checkTermination(t testing.TB, d runtime.Object, drain int) {
	t.Helper()
	c := container(t, d)
	sleep := int64(0)
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		sleep = c.Lifecycle.PreStop.Sleep.Seconds
	}
	g := podTemplate(t, d).Spec.TerminationGracePeriodSeconds
	if g == nil || *g <= sleep+int64(drain) {
		t.Errorf("terminationGracePeriodSeconds = %v, want > preStop %d + drain %d", g, sleep, drain)
	}
}

// checkSecretVolume: the file a flag names is mounted from the given Secret key.
func checkSecretVolume(t testing.TB, d runtime.Object, file, secret, key string) {
	t.Helper()
	c := container(t, d)
	for _, vm := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(file, vm.MountPath+"/")
		if !ok {
			continue
		}
		if !vm.ReadOnly {
			t.Errorf("%s: mount %s is writable", file, vm.MountPath)
		}
		v := volumeNamed(t, d, vm.Name)
		if v == nil || v.Secret == nil || v.Secret.SecretName != secret {
			t.Errorf("%s: volume %s = %s, want Secret %s", file, vm.Name, toYAML(v), secret)
			return
		}
		for _, it := range v.Secret.Items {
			if it.Path == rel && it.Key == key {
				return
			}
		}
		t.Errorf("%s: Secret %s volume items %s lack %s -> %s", file, secret, toYAML(v.Secret.Items), key, rel)
		return
	}
	t.Errorf("%s: no volume mount holds it", file)
}

// checkWiring: the objects refer to one another correctly — the Services and the PDB
// select the pods, Service target ports exist on the container, every volume's
// ConfigMap is rendered (or external), the ServiceAccount exists, the tool-policy flag
// names the mounted ConfigMap key.
func checkWiring(t testing.TB, m *manifests) {
	t.Helper()
	d := workload(t, m)
	pod := podTemplate(t, d)
	podLabels := pod.Labels
	var selector *metav1.LabelSelector
	switch d := d.(type) {
	case *appsv1.Deployment:
		selector = d.Spec.Selector
	case *appsv1.StatefulSet:
		selector = d.Spec.Selector
	}
	mustSelect(t, "workload selector", selector.MatchLabels, podLabels)
	c := container(t, d)
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, s := range all[*corev1.Service](m) {
		mustSelect(t, "Service "+s.Name, s.Spec.Selector, podLabels)
		for _, p := range s.Spec.Ports {
			if _, ok := ports[p.TargetPort.String()]; !ok {
				t.Errorf("Service %s port %s targets %s, which the container lacks (%v)", s.Name, p.Name, p.TargetPort.String(), ports)
			}
		}
		if s.Labels["arbiter.voicearbiter.io/wire-guard"] != "" {
			continue // the wire guard's own Service: checkGuardService
		}
		g := servicePort(s, "grpc")
		if g == nil || g.AppProtocol == nil || *g.AppProtocol != "grpc" {
			t.Errorf("Service %s grpc port = %s, want appProtocol grpc", s.Name, toYAML(g))
		}
	}
	main := all[*corev1.Service](m)[0]
	for _, s := range all[*corev1.Service](m) {
		if s.Name == name(d) {
			main = s
		}
	}
	if g := servicePort(main, "grpc"); g == nil || g.Port != grpcPort {
		t.Errorf("Service %s grpc port = %s", main.Name, toYAML(g))
	}
	if mp := servicePort(main, "metrics"); mp == nil || mp.Port != metricsPort {
		t.Errorf("Service %s metrics port = %s", main.Name, toYAML(mp))
	}
	for _, pdb := range all[*policyv1.PodDisruptionBudget](m) {
		mustSelect(t, "PDB", pdb.Spec.Selector.MatchLabels, podLabels)
	}
	sas := all[*corev1.ServiceAccount](m)
	if len(sas) != 1 || sas[0].Name != pod.Spec.ServiceAccountName {
		t.Errorf("serviceAccountName %q, ServiceAccounts %v", pod.Spec.ServiceAccountName, m.kinds())
	}
	cms := map[string]*corev1.ConfigMap{}
	for _, cm := range all[*corev1.ConfigMap](m) {
		cms[cm.Name] = cm
	}
	tools := volumeNamed(t, d, "tools")
	if tools == nil || tools.ConfigMap == nil {
		t.Fatalf("tools volume = %s", toYAML(tools))
	}
	cm := cms[tools.ConfigMap.Name]
	if cm == nil {
		t.Fatalf("tools volume names ConfigMap %q, not rendered", tools.ConfigMap.Name)
	}
	var policy map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["tools.yaml"]), &policy); err != nil {
		t.Errorf("tools.yaml is not YAML: %v", err)
	}
	mount := ""
	for _, vm := range c.VolumeMounts {
		if vm.Name == "tools" {
			mount = vm.MountPath
		}
	}
	if !slices.Contains(c.Args, "--tools="+mount+"/tools.yaml") || len(tools.ConfigMap.Items) != 1 || tools.ConfigMap.Items[0].Path != "tools.yaml" {
		t.Errorf("--tools does not name the mounted policy: args %q, mount %q, items %s", c.Args, mount, toYAML(tools.ConfigMap.Items))
	}
	// Every claim a volume names is rendered, or is persistence.existingClaim.
	claims := map[string]bool{}
	for _, pvc := range all[*corev1.PersistentVolumeClaim](m) {
		claims[pvc.Name] = true
	}
	for _, v := range pod.Spec.Volumes {
		if pvc := v.PersistentVolumeClaim; pvc != nil && !claims[pvc.ClaimName] && pvc.ClaimName != "my-claim" {
			t.Errorf("volume %s names claim %q, not rendered", v.Name, pvc.ClaimName)
		}
	}
	// The read-only root filesystem leaves /tmp writable through an emptyDir.
	if v := volumeNamed(t, d, "tmp"); v == nil || v.EmptyDir == nil {
		t.Errorf("no emptyDir /tmp: %s", toYAML(v))
	}
}

// mustSelect: a matchLabels selector is non-empty and matches the pod labels.
func mustSelect(t testing.TB, what string, sel, podLabels map[string]string) {
	t.Helper()
	if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(podLabels)) {
		t.Errorf("%s selector %v does not select pods labelled %v", what, sel, podLabels)
	}
}
