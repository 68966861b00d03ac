package charttest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	guardPort    = 8080
	guardService = "arbiter-wire-guard"
	// guardLabel marks the wire guard's Service (the ServiceMonitor leaves it out).
	guardLabel = "arbiter.voicearbiter.io/wire-guard"
)

// proxyArgs are the container's --proxy-* arguments, in order.
func proxyArgs(c *corev1.Container) []string {
	var out []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--proxy-") || strings.HasPrefix(a, "--no-proxy-") {
			out = append(out, a)
		}
	}
	return out
}

// serviceNamed is the render's Service of that name, nil without one.
func serviceNamed(m *manifests, name string) *corev1.Service {
	for _, s := range all[*corev1.Service](m) {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// checkGuardService: the wire guard's own Service selects the pods, carries the guard's
// port (appProtocol kubernetes.io/ws, or wss with TLS) and nothing else, with no
// session affinity (each WebSocket is one TCP connection: kube-proxy or a load
// balancer keeps it on one pod, and on Redis any pod may serve a session).
func checkGuardService(t testing.TB, m *manifests, port int32, appProtocol string) *corev1.Service {
	t.Helper()
	s := serviceNamed(m, guardService)
	if s == nil {
		t.Fatalf("no Service %s: %v", guardService, m.kinds())
	}
	mustSelect(t, "Service "+s.Name, s.Spec.Selector, podTemplate(t, workload(t, m)).Labels)
	if s.Labels[guardLabel] != "true" {
		t.Errorf("Service %s labels = %v, want %s", s.Name, s.Labels, guardLabel)
	}
	if len(s.Spec.Ports) != 1 {
		t.Fatalf("Service %s ports = %s, want the wire guard's only", s.Name, toYAML(s.Spec.Ports))
	}
	p := s.Spec.Ports[0]
	if p.Name != "wire-guard" || p.Port != port || p.TargetPort.String() != "wire-guard" || p.Protocol != corev1.ProtocolTCP ||
		p.AppProtocol == nil || *p.AppProtocol != appProtocol {
		t.Errorf("Service %s port = %s, want wire-guard %d -> wire-guard, appProtocol %s", s.Name, toYAML(p), port, appProtocol)
	}
	if s.Spec.SessionAffinity != "" && s.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("Service %s sessionAffinity = %s", s.Name, s.Spec.SessionAffinity)
	}
	return s
}

// TestWireGuardOffByDefault: without wireGuard.enabled nothing of the guard is rendered
// (no flag, port, Service, mount or NetworkPolicy rule), and setting its other values
// alone does not turn it on.
func TestWireGuardOffByDefault(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"default":    nil,
		"production": values(t, []string{productionFile}),
		"settings only": yamlValues(t, `wireGuard:
  upstreams: {vertex: wss://us-central1-aiplatform.googleapis.com}
  record: true
  tls: {enabled: true, existingSecret: guard-tls}
networkPolicy: {enabled: true}`),
	} {
		t.Run(name, func(t *testing.T) {
			m := mustRender(t, vals)
			c := container(t, workload(t, m))
			if a := proxyArgs(c); len(a) != 0 {
				t.Errorf("--proxy-* args with the guard off: %q", a)
			}
			if p := containerPort(c, "wire-guard"); p != nil {
				t.Errorf("wire-guard container port with the guard off: %s", toYAML(p))
			}
			if s := serviceNamed(m, guardService); s != nil {
				t.Errorf("Service %s with the guard off", s.Name)
			}
			for _, v := range []string{"wire-guard-tls", "wire-guard-upstream-ca"} {
				if volumeNamed(t, workload(t, m), v) != nil {
					t.Errorf("volume %s with the guard off", v)
				}
			}
			for _, np := range all[*networkingv1.NetworkPolicy](m) {
				if e := egressPorts(np); e["443/TCP"] {
					t.Errorf("NetworkPolicy egress opens 443 with the guard off: %v", e)
				}
				for _, r := range np.Spec.Ingress {
					for _, p := range r.Ports {
						if p.Port.String() == "wire-guard" {
							t.Errorf("NetworkPolicy opens wire-guard with the guard off")
						}
					}
				}
			}
			if strings.Contains(m.notes, "wire guard") {
				t.Errorf("NOTES.txt mentions the wire guard while it is off:\n%s", m.notes)
			}
		})
	}
}

// TestWireGuard: wireGuard.enabled on the embedded store (one pod) with the defaults:
// --proxy-listen on the port, serve's own defaults for everything left empty (no
// upstream or duration flag), the container port, its own Service, the NOTES line with
// the base URL, and the guard's close handshakes counted in the termination grace.
func TestWireGuard(t *testing.T) {
	m := mustRender(t, values(t, nil, "wireGuard.enabled=true"))
	d := only[*appsv1.Deployment](t, m)
	if *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %d, want 1 (embedded store)", *d.Spec.Replicas)
	}
	c := container(t, d)
	want := []string{"--proxy-listen=:8080", "--proxy-record=false", "--proxy-add-transcription=true"}
	if got := proxyArgs(c); !slices.Equal(got, want) {
		t.Errorf("proxy args = %q, want %q (serve's defaults for the rest)", got, want)
	}
	if p := containerPort(c, "wire-guard"); p == nil || p.ContainerPort != guardPort || p.Protocol != corev1.ProtocolTCP {
		t.Errorf("wire-guard container port = %s", toYAML(p))
	}
	checkGuardService(t, m, guardPort, "kubernetes.io/ws")
	// The gRPC Service stays as it was: gRPC and metrics only.
	if s := serviceNamed(m, "arbiter"); s == nil || servicePort(s, "wire-guard") != nil || len(s.Spec.Ports) != 2 {
		t.Errorf("Service arbiter = %s", toYAML(s))
	}
	checkGRPCProbes(t, c)
	checkWiring(t, m)
	// preStop 5 + the guard's close (write timeout 10 + 11) + drain 10 + margin 5.
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 41 {
		t.Errorf("terminationGracePeriodSeconds = %v, want 41", g)
	}
	for _, s := range []string{
		"ws://arbiter-wire-guard.voice.svc:8080",
		"http://arbiter-wire-guard.voice.svc:8080/v1",
		"Gemini API wss://generativelanguage.googleapis.com", "OpenAI wss://api.openai.com", "Vertex AI off",
	} {
		if !strings.Contains(m.notes, s) {
			t.Errorf("NOTES.txt lacks %q:\n%s", s, m.notes)
		}
	}
}

// TestWireGuardSettings: each value reaches its flag: an upstream set, "-" turning one
// off (an empty flag: serve refuses that protocol), the durations, record,
// addTranscription, the ports; a longer write timeout lengthens the termination grace.
func TestWireGuardSettings(t *testing.T) {
	m := mustRender(t, yamlValues(t, `wireGuard:
  enabled: true
  port: 9443
  upstreams:
    gemini: "-"
    vertex: wss://europe-west4-aiplatform.googleapis.com
    openai: ws://fake-provider.test.svc:9000/openai
  answerWait: 1500ms
  registerWait: 4s
  writeTimeout: 1m30s
  dialTimeout: 20s
  record: true
  addTranscription: false
  service:
    type: LoadBalancer
    port: 443
    annotations:
      service.beta.kubernetes.io/aws-load-balancer-type: nlb
`))
	d := only[*appsv1.Deployment](t, m)
	c := container(t, d)
	want := []string{
		"--proxy-listen=:9443",
		"--proxy-gemini-upstream=",
		"--proxy-vertex-upstream=wss://europe-west4-aiplatform.googleapis.com",
		"--proxy-openai-upstream=ws://fake-provider.test.svc:9000/openai",
		"--proxy-answer-wait=1500ms", "--proxy-register-wait=4s", "--proxy-write-timeout=1m30s", "--proxy-dial-timeout=20s",
		"--proxy-record=true", "--proxy-add-transcription=false",
	}
	if got := proxyArgs(c); !slices.Equal(got, want) {
		t.Errorf("proxy args =\n%q\nwant\n%q", got, want)
	}
	if p := containerPort(c, "wire-guard"); p == nil || p.ContainerPort != 9443 {
		t.Errorf("wire-guard container port = %s", toYAML(p))
	}
	s := checkGuardService(t, m, 443, "kubernetes.io/ws")
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer || s.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"] != "nlb" {
		t.Errorf("Service %s = %s", s.Name, toYAML(s))
	}
	if g := serviceNamed(m, "arbiter"); g == nil || g.Spec.Type != corev1.ServiceTypeClusterIP || len(g.Annotations) != 0 {
		t.Errorf("the gRPC Service took the guard's type or annotations: %s", toYAML(g))
	}
	checkWiring(t, m)
	// preStop 5 + the guard's close (90 + 11) + drain 10 + margin 5.
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 121 {
		t.Errorf("terminationGracePeriodSeconds = %v, want 121", g)
	}
	for _, s := range []string{"ws://arbiter-wire-guard.voice.svc:443", "Gemini API off", "Vertex AI wss://europe-west4-aiplatform.googleapis.com", "OpenAI ws://fake-provider.test.svc:9000/openai"} {
		if !strings.Contains(m.notes, s) {
			t.Errorf("NOTES.txt lacks %q:\n%s", s, m.notes)
		}
	}
}

// TestWireGuardGraceFromWriteTimeout: the guard's share of the termination grace is
// its write timeout, rounded up to whole seconds, plus 11 s, whatever units the
// duration is written in.
func TestWireGuardGraceFromWriteTimeout(t *testing.T) {
	for wt, share := range map[string]int64{"": 21, "10s": 21, "500ms": 12, "2.5s": 14, "1h": 3611, "1m0.5s": 72, "1500000us": 13, "3000ms": 14, "15000000000ns": 26, "1h0m0s": 3611, "0.5s": 12} {
		set := "wireGuard.enabled=true,server.preStopSleepSeconds=0,server.drainTimeoutSeconds=1,server.terminationGraceMarginSeconds=1"
		if wt != "" {
			set += ",wireGuard.writeTimeout=" + wt
		}
		d := only[*appsv1.Deployment](t, mustRender(t, values(t, nil, set)))
		if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 2+share {
			t.Errorf("writeTimeout %q: terminationGracePeriodSeconds = %v, want %d", wt, g, 2+share)
		}
	}
}

// TestWireGuardTLS: the guard's listener serves wss:// from a kubernetes.io/tls Secret
// mounted read-only, the upstream's CA comes from a Secret or a ConfigMap, and the
// gRPC port's TLS is a separate matter.
func TestWireGuardTLS(t *testing.T) {
	m := mustRender(t, values(t, nil, "wireGuard.enabled=true,wireGuard.tls.enabled=true,wireGuard.tls.existingSecret=guard-tls,"+
		"wireGuard.upstreamCA.existingSecret=upstream-ca"))
	d := only[*appsv1.Deployment](t, m)
	c := container(t, d)
	for _, a := range []string{
		"--proxy-tls-cert=/etc/arbiter/wire-guard-tls/tls.crt", "--proxy-tls-key=/etc/arbiter/wire-guard-tls/tls.key",
		"--proxy-ca-file=/etc/arbiter/wire-guard-upstream-ca/ca.crt",
	} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %q", c.Args, a)
		}
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--tls-") {
			t.Errorf("the guard's TLS turned on the gRPC port's: %q", a)
		}
	}
	checkSecretVolume(t, d, "/etc/arbiter/wire-guard-tls/tls.crt", "guard-tls", "tls.crt")
	checkSecretVolume(t, d, "/etc/arbiter/wire-guard-tls/tls.key", "guard-tls", "tls.key")
	checkSecretVolume(t, d, "/etc/arbiter/wire-guard-upstream-ca/ca.crt", "upstream-ca", "ca.crt")
	checkGuardService(t, m, guardPort, "kubernetes.io/wss")
	checkWiring(t, m)
	for _, s := range []string{"wss://arbiter-wire-guard.voice.svc:8080", "https://arbiter-wire-guard.voice.svc:8080/v1"} {
		if !strings.Contains(m.notes, s) {
			t.Errorf("NOTES.txt lacks %q:\n%s", s, m.notes)
		}
	}

	// The upstream CA from a ConfigMap (e.g. a trust-manager bundle), another key.
	m = mustRender(t, values(t, nil, "wireGuard.enabled=true,wireGuard.upstreamCA.existingConfigMap=bundle,wireGuard.upstreamCA.key=trust.pem"))
	d = only[*appsv1.Deployment](t, m)
	c = container(t, d)
	if !slices.Contains(c.Args, "--proxy-ca-file=/etc/arbiter/wire-guard-upstream-ca/trust.pem") {
		t.Errorf("args %q lack the CA from the ConfigMap", c.Args)
	}
	v := volumeNamed(t, d, "wire-guard-upstream-ca")
	if v == nil || v.ConfigMap == nil || v.ConfigMap.Name != "bundle" || len(v.ConfigMap.Items) != 1 ||
		v.ConfigMap.Items[0].Key != "trust.pem" || v.ConfigMap.Items[0].Path != "trust.pem" {
		t.Errorf("wire-guard-upstream-ca volume = %s", toYAML(v))
	}
	if vm := mountNamed(c, "wire-guard-upstream-ca"); vm == nil || !vm.ReadOnly || vm.MountPath != "/etc/arbiter/wire-guard-upstream-ca" {
		t.Errorf("wire-guard-upstream-ca mount = %s", toYAML(vm))
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--proxy-tls-") {
			t.Errorf("guard TLS arg %q without wireGuard.tls.enabled", a)
		}
	}
	checkGuardService(t, m, guardPort, "kubernetes.io/ws")
}

// TestWireGuardOnRedisReplicas: with Redis and 3 replicas every pod serves the guard
// (any replica may serve a guarded session: the store is shared), its Service spreads
// connections over all of them without affinity, and the PDB covers them.
func TestWireGuardOnRedisReplicas(t *testing.T) {
	m := mustRender(t, values(t, nil, "redis.enabled=true,redis.existingSecret=r,replicaCount=3,wireGuard.enabled=true"))
	d := only[*appsv1.Deployment](t, m)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Fatalf("replicas = %v, want 3", d.Spec.Replicas)
	}
	c := container(t, d)
	if !slices.Contains(c.Args, "--proxy-listen=:8080") || containerPort(c, "wire-guard") == nil {
		t.Errorf("the pod template does not serve the guard: args %q", c.Args)
	}
	if envNamed(c, "ARBITER_REDIS_URL") == nil {
		t.Errorf("no ARBITER_REDIS_URL")
	}
	s := checkGuardService(t, m, guardPort, "kubernetes.io/ws")
	if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("Service %s does not select the replicas", s.Name)
	}
	pdb := only[*policyv1.PodDisruptionBudget](t, m)
	mustSelect(t, "PDB", pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	checkWiring(t, m)
	if !strings.Contains(m.notes, "any replica") {
		t.Errorf("NOTES.txt does not say any replica serves the guard:\n%s", m.notes)
	}

	// The production values (HPA, mutual TLS on gRPC, auth) with the guard: the
	// ServiceMonitor keeps to the main Service, the NOTES name the guard's token.
	m = mustRender(t, mergeMaps(values(t, []string{productionFile}), yamlValues(t, "wireGuard: {enabled: true}")))
	checkGuardService(t, m, guardPort, "kubernetes.io/ws")
	checkWiring(t, m)
	sm := only[*monitoringv1.ServiceMonitor](t, m)
	sel, err := metav1LabelSelector(sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Matches(labels.Set(serviceNamed(m, guardService).Labels)) {
		t.Errorf("the ServiceMonitor selects %s, which has no metrics port", guardService)
	}
	if !sel.Matches(labels.Set(serviceNamed(m, "arbiter").Labels)) {
		t.Errorf("the ServiceMonitor lost the main Service")
	}
	// The agents the production values let call gRPC may reach the guard too.
	np := only[*networkingv1.NetworkPolicy](t, m)
	if g, w := ingressFor(np, "grpc"), ingressFor(np, "wire-guard"); g == nil || w == nil || toYAML(g.From) != toYAML(w.From) ||
		len(w.From) != 1 || w.From[0].NamespaceSelector == nil {
		t.Errorf("wire-guard ingress = %s, want grpcFrom's peers %s", toYAML(w), toYAML(g))
	}
	if !strings.Contains(m.notes, "X-Arbiter-Token") {
		t.Errorf("NOTES.txt does not say how a guarded connection names its tenant:\n%s", m.notes)
	}
}

// ingressFrom is the NetworkPolicy's ingress rule for the named port, nil without one.
func ingressFor(np *networkingv1.NetworkPolicy, port string) *networkingv1.NetworkPolicyIngressRule {
	for i, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port.String() == port {
				return &np.Spec.Ingress[i]
			}
		}
	}
	return nil
}

// egressPorts are the NetworkPolicy's egress ports as "port/protocol".
func egressPorts(np *networkingv1.NetworkPolicy) map[string]bool {
	out := map[string]bool{}
	for _, r := range np.Spec.Egress {
		for _, p := range r.Ports {
			out[fmt.Sprintf("%s/%s", p.Port.String(), *p.Protocol)] = true
		}
	}
	return out
}

// TestWireGuardNetworkPolicy: with networkPolicy.enabled the guard's port is open as the
// gRPC port is (networkPolicy.wireGuardFrom, else grpcFrom's peers, else every pod of
// the namespace), and with
// restrictEgress the guard may dial its upstreams' ports (443 for the wss://
// defaults, an upstream's own port, none for an upstream turned off) to
// networkPolicy.wireGuardUpstreamTo.
func TestWireGuardNetworkPolicy(t *testing.T) {
	np := only[*networkingv1.NetworkPolicy](t, mustRender(t, values(t, nil, "networkPolicy.enabled=true,wireGuard.enabled=true")))
	r := ingressFor(np, "wire-guard")
	if r == nil || len(r.Ports) != 1 || *r.Ports[0].Protocol != corev1.ProtocolTCP || len(r.From) != 1 || r.From[0].PodSelector == nil ||
		len(r.From[0].PodSelector.MatchLabels) != 0 || r.From[0].NamespaceSelector != nil || r.From[0].IPBlock != nil {
		t.Errorf("wire-guard ingress = %s, want every pod of the release namespace", toYAML(r))
	}
	if ingressFor(np, "grpc") == nil || ingressFor(np, "metrics") == nil {
		t.Errorf("ingress = %s", toYAML(np.Spec.Ingress))
	}
	if e := egressPorts(np); !e["443/TCP"] || !e["53/UDP"] || len(e) != 3 {
		t.Errorf("egress ports = %v, want DNS and 443/TCP (the default upstreams)", e)
	}

	np = only[*networkingv1.NetworkPolicy](t, mustRender(t, yamlValues(t, `wireGuard:
  enabled: true
  upstreams:
    gemini: "-"
    vertex: wss://us-central1-aiplatform.googleapis.com
    openai: ws://fake-provider:9000
networkPolicy:
  enabled: true
  wireGuardFrom:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: agents}}
  wireGuardUpstreamTo:
    - ipBlock: {cidr: 0.0.0.0/0, except: [10.0.0.0/8]}
`)))
	r = ingressFor(np, "wire-guard")
	if r == nil || len(r.From) != 1 || r.From[0].NamespaceSelector == nil || r.From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "agents" {
		t.Errorf("wire-guard ingress = %s, want wireGuardFrom", toYAML(r))
	}
	var upstream *networkingv1.NetworkPolicyEgressRule
	for i, e := range np.Spec.Egress {
		if len(e.To) == 1 && e.To[0].IPBlock != nil && e.To[0].IPBlock.CIDR == "0.0.0.0/0" {
			upstream = &np.Spec.Egress[i]
		}
	}
	if upstream == nil {
		t.Fatalf("no egress rule to wireGuardUpstreamTo: %s", toYAML(np.Spec.Egress))
	}
	var ports []string
	for _, p := range upstream.Ports {
		ports = append(ports, fmt.Sprintf("%s/%s", p.Port.String(), *p.Protocol))
	}
	if !slices.Equal(ports, []string{"443/TCP", "9000/TCP"}) {
		t.Errorf("upstream egress ports = %v, want 443/TCP (Vertex) and 9000/TCP (OpenAI)", ports)
	}

	// Every upstream on one port: one port in the rule. No egress restriction: no rule.
	np = only[*networkingv1.NetworkPolicy](t, mustRender(t, values(t, nil, "networkPolicy.enabled=true,wireGuard.enabled=true,wireGuard.upstreams.vertex=wss://us-central1-aiplatform.googleapis.com:443")))
	if e := egressPorts(np); len(e) != 3 || !e["443/TCP"] {
		t.Errorf("egress ports = %v, want DNS and one 443/TCP", e)
	}
	np = only[*networkingv1.NetworkPolicy](t, mustRender(t, values(t, nil, "networkPolicy.enabled=true,networkPolicy.restrictEgress=false,wireGuard.enabled=true")))
	if len(np.Spec.Egress) != 0 || slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Errorf("egress = %s without restrictEgress", toYAML(np.Spec.Egress))
	}
}

// TestWireGuardFlagsExist: every flag the chart renders with the guard fully set is
// one of serve's (TestChartFlagsExist for the guard's values).
func TestWireGuardFlagsExist(t *testing.T) {
	flags, _ := serveFlags(t)
	for name, vals := range map[string]map[string]any{
		"defaults": values(t, nil, "wireGuard.enabled=true"),
		"everything": yamlValues(t, `wireGuard:
  enabled: true
  upstreams: {gemini: "-", vertex: "wss://v.example", openai: "ws://o.example:81"}
  answerWait: 1s
  registerWait: 1s
  writeTimeout: 1s
  dialTimeout: 1s
  record: true
  addTranscription: false
  tls: {enabled: true, existingSecret: s}
  upstreamCA: {existingSecret: ca}`),
	} {
		var w runtime.Object = workload(t, mustRender(t, vals))
		for _, a := range container(t, w).Args {
			flag, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !flags[flag] {
				t.Errorf("%s: arg %q is not an `arbiter serve` flag", name, a)
			}
		}
	}
}

// TestWireGuardRefused: values serve would refuse, or that cannot work, are refused by
// the schema naming the field and, with the schema skipped, by the templates where
// they check it too.
func TestWireGuardRefused(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		schema    string // in the schema error
		tmpl      string // in the template's fail message; "" when only the schema checks it
	}{
		{"port as a string", "wireGuard: {enabled: true, port: \"8080\"}", "/wireGuard/port", ""},
		{"port out of range", "wireGuard: {enabled: true, port: 0}", "/wireGuard/port", ""},
		{"service port out of range", "wireGuard: {enabled: true, service: {port: 70000}}", "/wireGuard/service/port", ""},
		{"service type", "wireGuard: {enabled: true, service: {type: ExternalName}}", "/wireGuard/service/type", ""},
		{"unknown key", "wireGuard: {enabled: true, listen: \":8080\"}", "additional properties 'listen'", ""},
		{"unknown upstream", "wireGuard: {enabled: true, upstreams: {anthropic: wss://x}}", "additional properties 'anthropic'", ""},
		{"https upstream", "wireGuard: {enabled: true, upstreams: {openai: \"https://api.openai.com\"}}", "/wireGuard/upstreams/openai", ""},
		{"upstream with a query", "wireGuard: {enabled: true, upstreams: {gemini: \"wss://g.example?key=k\"}}", "/wireGuard/upstreams/gemini", ""},
		{"upstream without a host", "wireGuard: {enabled: true, upstreams: {vertex: \"wss://\"}}", "/wireGuard/upstreams/vertex", ""},
		// serve refuses these at the start (TestServeProxyUpstreamChecked); the schema
		// passed them, and a port out of range made a NetworkPolicy the API refuses.
		{"upstream with user info", "wireGuard: {enabled: true, upstreams: {gemini: \"wss://u:p@g.example\"}}", "/wireGuard/upstreams/gemini", ""},
		{"upstream port out of range", "wireGuard: {enabled: true, upstreams: {openai: \"ws://o.example:99999\"}}", "/wireGuard/upstreams/openai", ""},
		{"upstream port 0", "wireGuard: {enabled: true, upstreams: {openai: \"ws://o.example:0\"}}", "/wireGuard/upstreams/openai", ""},
		{"upstream with a fragment", "wireGuard: {enabled: true, upstreams: {gemini: \"wss://g.example/x#f\"}}", "/wireGuard/upstreams/gemini", ""},
		{"duration in words", "wireGuard: {enabled: true, answerWait: 2 seconds}", "/wireGuard/answerWait", ""},
		{"zero duration", "wireGuard: {enabled: true, registerWait: 0s}", "/wireGuard/registerWait", ""},
		{"zero duration in ms", "wireGuard: {enabled: true, dialTimeout: 0.0ms}", "/wireGuard/dialTimeout", ""},
		{"zero in two parts", "wireGuard: {enabled: true, answerWait: 0m0s}", "/wireGuard/answerWait", ""},
		{"negative duration", "wireGuard: {enabled: true, answerWait: -2s}", "/wireGuard/answerWait", ""},
		{"duration as a number", "wireGuard: {enabled: true, writeTimeout: 10}", "/wireGuard/writeTimeout", ""},
		{"record as a string", "wireGuard: {enabled: true, record: \"yes\"}", "/wireGuard/record", ""},
		{"every upstream off", "wireGuard: {enabled: true, upstreams: {gemini: \"-\", openai: \"-\"}}", "/wireGuard/upstreams/vertex", "wireGuard.upstreams: every upstream is off"},
		{"TLS without a secret", "wireGuard: {enabled: true, tls: {enabled: true}}", "/wireGuard/tls/existingSecret", "wireGuard.tls.enabled needs wireGuard.tls.existingSecret"},
		{"CA from a Secret and a ConfigMap", "wireGuard: {enabled: true, upstreamCA: {existingSecret: a, existingConfigMap: b}}", "/wireGuard/upstreamCA/existingConfigMap", "wireGuard.upstreamCA: existingSecret or existingConfigMap, not both"},
		{"CA key empty", "wireGuard: {enabled: true, upstreamCA: {existingSecret: a, key: \"\"}}", "/wireGuard/upstreamCA/key", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRefused(t, tc.doc, tc.schema, tc.tmpl) })
	}
	// What the schema cannot compare (one value against another) and names the chart
	// uses itself: the templates refuse them.
	for _, tc := range []struct{ name, doc, want string }{
		{"port of the gRPC server", "wireGuard: {enabled: true, port: 50051}", "wireGuard.port must differ"},
		{"port of the metrics", "wireGuard: {enabled: true, port: 9090}", "wireGuard.port must differ"},
		{"port of the probes", "wireGuard: {enabled: true, port: 8081}", "wireGuard.port must differ"},
		{"volume named like the guard's", "extraVolumes: [{name: wire-guard-tls, emptyDir: {}}]", "extraVolumes: the name wire-guard-tls"},
		{"the guard Service's marker", "commonLabels: {arbiter.voicearbiter.io/wire-guard: \"true\"}", "commonLabels sets arbiter.voicearbiter.io/wire-guard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(t, yamlValues(t, tc.doc), renderOpts{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestWireGuardLongName: the guard's Service name stays a DNS label (63 characters)
// with the longest fullname the chart makes.
func TestWireGuardLongName(t *testing.T) {
	long := strings.Repeat("a", 70)
	m := mustRender(t, values(t, nil, "wireGuard.enabled=true,fullnameOverride="+long))
	found := false
	for _, s := range all[*corev1.Service](m) {
		if len(s.Name) > 63 {
			t.Errorf("Service name %q: %d characters", s.Name, len(s.Name))
		}
		if strings.HasSuffix(s.Name, "-wire-guard") {
			found = true
		}
	}
	if !found {
		t.Errorf("no -wire-guard Service: %v", m.kinds())
	}
}

// TestLintWireGuard: helm lint is clean with the guard on, alone and with the
// production values, TLS and an upstream CA.
func TestLintWireGuard(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"guard": values(t, nil, "wireGuard.enabled=true"),
		"guard+production": mergeMaps(values(t, []string{productionFile}), yamlValues(t,
			"wireGuard: {enabled: true, tls: {enabled: true, existingSecret: g}, upstreamCA: {existingSecret: ca}}\nnetworkPolicy: {enabled: true}")),
	} {
		l := lint.All(chartDir, vals, releaseNS, false)
		for _, msg := range l.Messages {
			if msg.Severity >= support.WarningSev {
				t.Errorf("%s: lint %s", name, msg)
			}
		}
	}
}

// TestWireGuardUpstreamForms: what serve's check takes renders, with its port opened
// for egress: an IPv6 host with a port, the highest port, a path prefix.
func TestWireGuardUpstreamForms(t *testing.T) {
	np := only[*networkingv1.NetworkPolicy](t, mustRender(t, yamlValues(t, `networkPolicy: {enabled: true}
wireGuard:
  enabled: true
  upstreams: {gemini: "ws://[fd00::1]:9101/prefix", vertex: "-", openai: "wss://o.example:65535/v"}
`)))
	e := egressPorts(np)
	for _, p := range []string{"9101/TCP", "65535/TCP"} {
		if !e[p] {
			t.Errorf("egress ports = %v, want %s", e, p)
		}
	}
}
