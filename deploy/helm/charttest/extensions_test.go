package charttest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// extensionValues sets every extension point the chart offers.
const extensionValues = `
commonLabels:
  team: voice
  cost-center: "42"
commonAnnotations:
  owner: voice-platform@example.com
service:
  annotations:
    owner: service-owner@example.com
    networking.example.com/lb: internal
podAnnotations:
  vault.example.com/inject: "true"
podLabels:
  sidecar.istio.io/inject: "false"
server:
  extraArgs: ["--max-connection-age=30m"]
  extraEnv:
    - name: TZ
      value: UTC
  extraEnvFrom:
    - secretRef:
        name: arbiter-env
    - configMapRef:
        name: arbiter-config
      prefix: CFG_
extraVolumes:
  - name: certs
    secret:
      secretName: extra-ca
extraVolumeMounts:
  - name: certs
    mountPath: /etc/ssl/extra
    readOnly: true
initContainers:
  - name: wait-for-dns
    image: busybox:1.37
    command: ["sh", "-c", "until nslookup kubernetes.default; do sleep 1; done"]
  - name: log-forwarder
    image: fluent/fluent-bit:4.0
    restartPolicy: Always
sidecars:
  - name: proxy
    image: envoyproxy/envoy:v1.36.0
    ports:
      - name: proxy
        containerPort: 10000
nodeSelector:
  kubernetes.io/arch: arm64
tolerations:
  - key: dedicated
    operator: Equal
    value: voice
    effect: NoSchedule
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: node.example.com/pool
              operator: In
              values: [voice]
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        app.kubernetes.io/name: arbiter
priorityClassName: voice-critical
podSecurityContext:
  fsGroupChangePolicy: OnRootMismatch
  supplementalGroups: [1000]
securityContext:
  seccompProfile:
    type: RuntimeDefault
`

// TestCommonLabelsAndAnnotations: commonLabels land on every object and on the pods,
// commonAnnotations on every object but the pods; an object's own annotations win;
// the selectors keep the chart's two labels only.
func TestCommonLabelsAndAnnotations(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"production":  mergeMaps(values(t, []string{productionFile}), yamlValues(t, extensionValues)),
		"persistence": mergeMaps(yamlValues(t, extensionValues), yamlValues(t, "persistence: {enabled: true}")),
	} {
		t.Run(name, func(t *testing.T) {
			m := mustRender(t, vals)
			t.Logf("objects: %v", m.kinds())
			for _, o := range m.objects {
				u := toUnstructured(t, o)
				what := u.GetKind() + "/" + u.GetName()
				if l := u.GetLabels(); l["team"] != "voice" || l["cost-center"] != "42" || l["app.kubernetes.io/name"] != "arbiter" {
					t.Errorf("%s labels = %v", what, l)
				}
				a := u.GetAnnotations()
				want := "voice-platform@example.com"
				if what == "Service/arbiter" {
					want = "service-owner@example.com"
					if a["networking.example.com/lb"] != "internal" {
						t.Errorf("%s lost service.annotations: %v", what, a)
					}
				}
				if a["owner"] != want {
					t.Errorf("%s annotation owner = %q, want %q", what, a["owner"], want)
				}
			}
			w := workload(t, m)
			pod := podTemplate(t, w)
			if pod.Labels["team"] != "voice" || pod.Labels["sidecar.istio.io/inject"] != "false" || pod.Labels["app.kubernetes.io/instance"] != "arbiter" {
				t.Errorf("pod labels = %v", pod.Labels)
			}
			if _, ok := pod.Annotations["owner"]; ok || pod.Annotations["vault.example.com/inject"] != "true" || len(pod.Annotations["checksum/tools"]) != 64 {
				t.Errorf("pod annotations = %v, want podAnnotations and the checksum, not commonAnnotations", pod.Annotations)
			}
			if sel := selectorOf(t, w); !maps.Equal(sel, map[string]string{"app.kubernetes.io/name": "arbiter", "app.kubernetes.io/instance": "arbiter"}) {
				t.Errorf("selector = %v: commonLabels or podLabels leaked into it", sel)
			}
			checkWiring(t, m)
		})
	}
}

// TestLabelValuesStayStrings: the labels go through toYaml, so an appVersion that reads
// as a number ("2.0") must still come out a string label.
func TestLabelValuesStayStrings(t *testing.T) {
	files, err := renderChart(t, yamlValues(t, "persistence: {enabled: true}\ncommonLabels: {release-train: \"2026.12\"}"), renderOpts{appVersion: "2.0"})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		objs, err := decodeAll(content)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, content)
		}
		for _, o := range objs {
			if l := toUnstructured(t, o).GetLabels(); l["app.kubernetes.io/version"] != "2.0" || l["release-train"] != "2026.12" {
				t.Errorf("%s labels = %v", name, l)
			}
		}
	}
}

// TestPodExtensionPoints: each pod-level value lands where Kubernetes reads it, in the
// Deployment and in the StatefulSet alike, and the chart's own settings stay.
func TestPodExtensionPoints(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"deployment":  yamlValues(t, extensionValues),
		"statefulset": mergeMaps(yamlValues(t, extensionValues), yamlValues(t, "persistence: {enabled: true}")),
	} {
		t.Run(name, func(t *testing.T) {
			m := mustRender(t, vals)
			w := workload(t, m)
			spec := podTemplate(t, w).Spec
			c := container(t, w)

			if !slices.Contains(c.Args, "--max-connection-age=30m") || !slices.Contains(c.Args, "--listen=:50051") {
				t.Errorf("args = %q", c.Args)
			}
			if e := envNamed(c, "TZ"); e == nil || e.Value != "UTC" || envNamed(c, "GOMEMLIMIT") == nil {
				t.Errorf("env = %s", toYAML(c.Env))
			}
			if len(c.EnvFrom) != 2 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "arbiter-env" ||
				c.EnvFrom[1].ConfigMapRef == nil || c.EnvFrom[1].ConfigMapRef.Name != "arbiter-config" || c.EnvFrom[1].Prefix != "CFG_" {
				t.Errorf("envFrom = %s", toYAML(c.EnvFrom))
			}
			if v := volumeNamed(t, w, "certs"); v == nil || v.Secret == nil || v.Secret.SecretName != "extra-ca" || volumeNamed(t, w, "tools") == nil {
				t.Errorf("volumes = %s", toYAML(spec.Volumes))
			}
			if vm := mountNamed(c, "certs"); vm == nil || vm.MountPath != "/etc/ssl/extra" || !vm.ReadOnly || mountNamed(c, "tools") == nil {
				t.Errorf("volumeMounts = %s", toYAML(c.VolumeMounts))
			}
			if names := containerNames(spec.InitContainers); !slices.Equal(names, []string{"wait-for-dns", "log-forwarder"}) ||
				spec.InitContainers[1].RestartPolicy == nil || *spec.InitContainers[1].RestartPolicy != corev1.ContainerRestartPolicyAlways {
				t.Errorf("initContainers = %s", toYAML(spec.InitContainers))
			}
			if names := containerNames(spec.Containers); !slices.Equal(names, []string{"arbiter", "proxy"}) || spec.Containers[1].Ports[0].ContainerPort != 10000 {
				t.Errorf("containers = %v", names)
			}
			if spec.NodeSelector["kubernetes.io/arch"] != "arm64" {
				t.Errorf("nodeSelector = %v", spec.NodeSelector)
			}
			if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated" || spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
				t.Errorf("tolerations = %s", toYAML(spec.Tolerations))
			}
			if a := spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
				a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Errorf("affinity = %s, want the node affinity and the chart's soft anti-affinity", toYAML(a))
			}
			if len(spec.TopologySpreadConstraints) != 1 || spec.TopologySpreadConstraints[0].TopologyKey != "topology.kubernetes.io/zone" {
				t.Errorf("topologySpreadConstraints = %s", toYAML(spec.TopologySpreadConstraints))
			}
			if spec.PriorityClassName != "voice-critical" {
				t.Errorf("priorityClassName = %q", spec.PriorityClassName)
			}
			ps := spec.SecurityContext
			if ps.FSGroupChangePolicy == nil || *ps.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch || !slices.Equal(ps.SupplementalGroups, []int64{1000}) {
				t.Errorf("podSecurityContext = %s", toYAML(ps))
			}
			if sc := c.SecurityContext; sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("securityContext = %s", toYAML(sc))
			}
			// The additions merge into the defaults: still non-root, read-only, no
			// privilege escalation, no capabilities.
			checkPodSecurity(t, w)
			checkGRPCProbes(t, c)
			checkWiring(t, m)
		})
	}
}

// TestExtensionPointsRefused: what would break selectors, Helm's ownership or the pod
// (a name the chart uses) is refused by the templates, and malformed objects by the
// schema.
func TestExtensionPointsRefused(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"common label the chart sets", "commonLabels: {app.kubernetes.io/name: other}", "commonLabels sets app.kubernetes.io/name"},
		{"pod label the chart sets", "podLabels: {app.kubernetes.io/instance: other}", "podLabels sets app.kubernetes.io/instance"},
		{"managed-by", "commonLabels: {app.kubernetes.io/managed-by: me}", "commonLabels sets app.kubernetes.io/managed-by"},
		{"the headless marker", "commonLabels: {arbiter.voicearbiter.io/headless: \"true\"}", "commonLabels sets arbiter.voicearbiter.io/headless"},
		{"volume named like the chart's", "extraVolumes: [{name: tmp, emptyDir: {}}]", "extraVolumes: the name tmp"},
		{"sidecar named arbiter", "sidecars: [{name: arbiter, image: x}]", "the name arbiter is taken"},
		{"init and sidecar share a name", "initContainers: [{name: a, image: x}]\nsidecars: [{name: a, image: y}]", "the name a is taken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChart(t, yamlValues(t, tc.doc), renderOpts{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"label value not a string", "commonLabels: {tier: 3}", "commonLabels"},
		{"volume without a name", "extraVolumes: [{emptyDir: {}}]", "extraVolumes"},
		{"mount path relative", "extraVolumeMounts: [{name: x, mountPath: data}]", "extraVolumeMounts"},
		{"sidecar without a name", "sidecars: [{image: x}]", "sidecars"},
		{"envFrom typo", "server:\n  extraEnvFrom: [{secretRefs: {name: x}}]", "extraEnvFrom"},
		{"init containers not a list", "initContainers: {name: x}", "initContainers"},
	} {
		t.Run("schema: "+tc.name, func(t *testing.T) {
			_, err := renderChart(t, yamlValues(t, tc.doc), renderOpts{})
			if err == nil || !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a schema error naming %q", err, tc.want)
			}
		})
	}
}

// TestLintExtensions: helm lint is clean with every extension point set, with and
// without persistence.
func TestLintExtensions(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"extensions":             yamlValues(t, extensionValues),
		"extensions+persistence": mergeMaps(yamlValues(t, extensionValues), yamlValues(t, "persistence: {enabled: true}")),
	} {
		l := lint.All(chartDir, vals, releaseNS, false)
		for _, msg := range l.Messages {
			if msg.Severity >= support.WarningSev {
				t.Errorf("%s: lint %s", name, msg)
			}
		}
	}
}

func selectorOf(t testing.TB, w runtime.Object) map[string]string {
	t.Helper()
	switch w := w.(type) {
	case *appsv1.Deployment:
		return w.Spec.Selector.MatchLabels
	case *appsv1.StatefulSet:
		return w.Spec.Selector.MatchLabels
	}
	t.Fatalf("%T is not a workload", w)
	return nil
}

func mountNamed(c *corev1.Container, name string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].Name == name {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}
