package charttest

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestPersistence: persistence.enabled puts the embedded store's state file on a
// PersistentVolumeClaim: a StatefulSet of one replica (never two pods on one state
// file) mounts the claim where --state-file points; no Deployment.
func TestPersistence(t *testing.T) {
	m := mustRender(t, values(t, nil, "persistence.enabled=true"))
	want := []string{
		"ConfigMap/arbiter-tools", "PersistentVolumeClaim/arbiter-data", "Service/arbiter",
		"Service/arbiter-headless", "ServiceAccount/arbiter", "StatefulSet/arbiter",
	}
	if got := m.kinds(); !slices.Equal(got, want) {
		t.Fatalf("objects = %v, want %v", got, want)
	}
	ss := only[*appsv1.StatefulSet](t, m)
	if ss.Spec.Replicas == nil || *ss.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", ss.Spec.Replicas)
	}
	if ss.Spec.ServiceName != "arbiter-headless" || ss.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("serviceName %q, podManagementPolicy %q", ss.Spec.ServiceName, ss.Spec.PodManagementPolicy)
	}
	if len(ss.Spec.VolumeClaimTemplates) != 0 {
		t.Errorf("volumeClaimTemplates = %s, want the chart's own claim (resizable by helm upgrade)", toYAML(ss.Spec.VolumeClaimTemplates))
	}

	pvc := only[*corev1.PersistentVolumeClaim](t, m)
	if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) ||
		pvc.Spec.StorageClassName != nil || !pvc.Spec.Resources.Requests.Storage().Equal(resource.MustParse("1Gi")) {
		t.Errorf("PVC spec = %s, want ReadWriteOnce, the default StorageClass, 1Gi", toYAML(pvc.Spec))
	}
	mustSelect(t, "PVC labels", map[string]string{"app.kubernetes.io/instance": "arbiter"}, pvc.Labels)

	c := container(t, ss)
	checkStateFileOnClaim(t, ss, "/var/lib/arbiter/state.db", "arbiter-data")
	checkGRPCProbes(t, c)
	checkPodSecurity(t, ss)
	checkResources(t, c)
	checkTermination(t, ss, 10)
	checkWiring(t, m)
	if !strings.Contains(m.notes, "PersistentVolumeClaim arbiter-data") || !strings.Contains(m.notes, "/var/lib/arbiter/state.db") {
		t.Errorf("NOTES.txt does not name the claim and the state file:\n%s", m.notes)
	}

	// Without persistence: a Deployment, no claim, no state file.
	m = mustRender(t, nil)
	none[*appsv1.StatefulSet](t, m)
	none[*corev1.PersistentVolumeClaim](t, m)
	for _, a := range container(t, workload(t, m)).Args {
		if strings.HasPrefix(a, "--state-file") {
			t.Errorf("arg %q without persistence", a)
		}
	}
}

// TestPersistenceOptions: storageClass (a name, or "-" for none), accessModes, size,
// annotations, mountPath, and existingClaim (no claim rendered).
func TestPersistenceOptions(t *testing.T) {
	m := mustRender(t, yamlValues(t, `
persistence:
  enabled: true
  storageClass: fast-ssd
  accessModes: [ReadWriteOncePod]
  size: 5Gi
  annotations:
    helm.sh/resource-policy: keep
  mountPath: /data
`))
	pvc := only[*corev1.PersistentVolumeClaim](t, m)
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "fast-ssd" ||
		!slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}) ||
		!pvc.Spec.Resources.Requests.Storage().Equal(resource.MustParse("5Gi")) ||
		pvc.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("PVC = %s", toYAML(pvc))
	}
	checkStateFileOnClaim(t, only[*appsv1.StatefulSet](t, m), "/data/state.db", "arbiter-data")

	pvc = only[*corev1.PersistentVolumeClaim](t, mustRender(t, values(t, nil, "persistence.enabled=true,persistence.storageClass=-")))
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "" {
		t.Errorf(`storageClass "-": storageClassName = %v, want ""`, pvc.Spec.StorageClassName)
	}

	m = mustRender(t, values(t, nil, "persistence.enabled=true,persistence.existingClaim=my-claim"))
	none[*corev1.PersistentVolumeClaim](t, m)
	checkStateFileOnClaim(t, only[*appsv1.StatefulSet](t, m), "/var/lib/arbiter/state.db", "my-claim")
}

// TestPersistenceRefuses: with persistence, more than one replica, autoscaling, Redis
// (which keeps its own state) and a shared-filesystem access mode are refused, by the
// schema and, with the schema skipped, by the templates.
func TestPersistenceRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		schema    string // in the schema error
		tmpl      string // in the template's fail message; "" when only the schema checks it
	}{
		{"two replicas", "persistence: {enabled: true}\nreplicaCount: 2", "replicaCount", "two pods must never open it"},
		{"autoscaling", "persistence: {enabled: true}\nautoscaling: {enabled: true}", "autoscaling", "autoscaling.enabled needs redis.enabled=true"},
		{"redis", "persistence: {enabled: true}\nredis: {enabled: true, existingSecret: r}", "enabled", "persistence.enabled is for the embedded store"},
		{"shared filesystem", "persistence: {enabled: true, accessModes: [ReadWriteMany]}", "accessModes", ""},
		{"relative mount path", "persistence: {enabled: true, mountPath: data}", "mountPath", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRefused(t, tc.doc, tc.schema, tc.tmpl) })
	}
}

// checkStateFileOnClaim: --state-file names a file on a writable mount of a volume
// backed by the claim, and no other container arg names a state file.
func checkStateFileOnClaim(t testing.TB, w *appsv1.StatefulSet, file, claim string) {
	t.Helper()
	c := container(t, w)
	var flags []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--state-file") {
			flags = append(flags, a)
		}
	}
	if !slices.Equal(flags, []string{"--state-file=" + file}) {
		t.Errorf("state-file args = %q, want --state-file=%s", flags, file)
	}
	for _, vm := range c.VolumeMounts {
		if !strings.HasPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			continue
		}
		if vm.ReadOnly || vm.SubPath != "" {
			t.Errorf("state-file mount %s = %s, want writable, the whole volume", vm.MountPath, toYAML(vm))
		}
		v := volumeNamed(t, w, vm.Name)
		if v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim || v.PersistentVolumeClaim.ReadOnly {
			t.Errorf("volume %s = %s, want the claim %s", vm.Name, toYAML(v), claim)
		}
		return
	}
	t.Errorf("no volume mount holds %s: %s", file, toYAML(c.VolumeMounts))
}

// checkRefused: the values doc are refused by the schema with an error naming schema,
// and, when tmpl is set, by the templates too with the schema skipped (their fail
// message holding tmpl): a rule both say is kept when one of them is bypassed.
func checkRefused(t *testing.T, doc, schema, tmpl string) {
	t.Helper()
	vals := yamlValues(t, doc)
	_, err := renderChart(t, vals, renderOpts{})
	if err == nil || !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), schema) {
		t.Errorf("with schema: err = %v, want a schema error naming %q", err, schema)
	}
	if tmpl == "" {
		return
	}
	_, err = renderChart(t, vals, renderOpts{skipSchema: true})
	if err == nil || !strings.Contains(err.Error(), tmpl) {
		t.Errorf("without schema: err = %v, want the template's fail %q", err, tmpl)
	}
}
