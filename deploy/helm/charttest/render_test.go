package charttest

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Paths relative to this package's directory (go test runs in it).
const (
	chartDir        = "../arbiter"
	productionFile  = "../values-production.yaml"
	releaseName     = "arbiter"
	releaseNS       = "voice"
	kubeVersionTest = "v1.33.0"
)

// scheme knows every kind the chart renders; the ServiceMonitor comes from the
// Prometheus Operator's own Go types (monitoring.coreos.com/v1).
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme,
		autoscalingv2.AddToScheme, networkingv1.AddToScheme, monitoringv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// strictDecoder decodes YAML or JSON into the registered Go types and fails on an
// unknown or duplicated field (serializer.EnableStrict), as `kubectl apply
// --validate=strict` and the API server's strict field validation do.
var strictDecoder = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// loadChart loads the chart directory as `helm` does.
func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return c
}

// values builds user-supplied values the way the helm CLI does: -f files merged in
// order (later wins, maps merge), then --set expressions.
func values(t testing.TB, files []string, sets ...string) map[string]any {
	t.Helper()
	base := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		base = mergeMaps(base, v)
	}
	for _, s := range sets {
		if err := strvals.ParseInto(s, base); err != nil {
			t.Fatalf("--set %s: %v", s, err)
		}
	}
	return base
}

// yamlValues parses an inline values document (for types --set cannot express).
func yamlValues(t testing.TB, doc string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValues([]byte(doc))
	if err != nil {
		t.Fatalf("values %q: %v", doc, err)
	}
	return v
}

// mergeMaps is the helm CLI's merge of values files (pkg/cli/values).
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	maps.Copy(out, a)
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

type renderOpts struct {
	skipSchema bool
	// kubeVersion is the cluster's version (--kube-version); empty: kubeVersionTest.
	kubeVersion string
	// appVersion, when set, replaces Chart.yaml's appVersion.
	appVersion string
}

// renderChart renders the chart like `helm template arbiter deploy/helm/arbiter -n
// voice --kube-version 1.33`: values coalesced with the chart's, checked against
// values.schema.json (unless skipped), every template executed. It returns the
// rendered files by template name (NOTES.txt included).
func renderChart(t testing.TB, vals map[string]any, o renderOpts) (map[string]string, error) {
	t.Helper()
	c := loadChart(t)
	if o.appVersion != "" {
		c.Metadata.AppVersion = o.appVersion
	}
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	kv, err := chartutil.ParseKubeVersion(cmp.Or(o.kubeVersion, kubeVersionTest))
	if err != nil {
		t.Fatal(err)
	}
	caps.KubeVersion = *kv
	top, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals,
		chartutil.ReleaseOptions{Name: releaseName, Namespace: releaseNS, IsInstall: true, Revision: 1},
		caps, o.skipSchema)
	if err != nil {
		return nil, err
	}
	// Strict: a template reading a value that does not exist is an error, not "".
	return engine.Engine{Strict: true}.Render(c, top)
}

// manifests is a render decoded into Kubernetes objects.
type manifests struct {
	files   map[string]string
	objects []runtime.Object
	notes   string
}

// mustRender renders and strictly decodes every manifest, failing the test on any
// error.
func mustRender(t testing.TB, vals map[string]any) *manifests {
	t.Helper()
	files, err := renderChart(t, vals, renderOpts{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	m := &manifests{files: files}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		content := files[name]
		switch {
		case strings.HasSuffix(name, "NOTES.txt"):
			m.notes = content
			continue
		case strings.HasPrefix(filepath.Base(name), "_"):
			continue
		}
		objs, err := decodeAll(content)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, content)
		}
		m.objects = append(m.objects, objs...)
	}
	return m
}

// decodeAll splits a rendered file into YAML documents and decodes each non-empty
// one strictly into its registered Go type.
func decodeAll(content string) ([]runtime.Object, error) {
	var out []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(content)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, err := decodeStrict(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
}

// decodeStrict decodes one manifest: apiVersion and kind must name a registered type,
// and every field must exist in it.
func decodeStrict(doc []byte) (runtime.Object, error) {
	obj, gvk, err := strictDecoder.Decode(doc, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode %v: %w", gvk, err)
	}
	return obj, nil
}

// toUnstructured is the schemaless view of a manifest, for checks by field path.
func toUnstructured(t testing.TB, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	return u
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// kinds lists "Kind/name" of every object, sorted.
func (m *manifests) kinds() []string {
	var out []string
	for _, o := range m.objects {
		gvk := o.GetObjectKind().GroupVersionKind()
		out = append(out, gvk.Kind+"/"+name(o))
	}
	sort.Strings(out)
	return out
}

func name(o runtime.Object) string {
	if a, ok := o.(interface{ GetName() string }); ok {
		return a.GetName()
	}
	return ""
}

// only returns the single object of type T (failing when there is not exactly one).
func only[T runtime.Object](t testing.TB, m *manifests) T {
	t.Helper()
	all := all[T](m)
	if len(all) != 1 {
		var zero T
		t.Fatalf("want exactly one %T, got %d (objects: %v)", zero, len(all), m.kinds())
	}
	return all[0]
}

func all[T runtime.Object](m *manifests) []T {
	var out []T
	for _, o := range m.objects {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// none fails when the render holds an object of type T.
func none[T runtime.Object](t testing.TB, m *manifests) {
	t.Helper()
	if n := len(all[T](m)); n != 0 {
		var zero T
		t.Fatalf("want no %T, got %d", zero, n)
	}
}

// toYAML is for failure messages.
func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// readFile reads a file relative to this package, failing the test on error.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// metav1LabelSelector turns a LabelSelector into a labels.Selector.
func metav1LabelSelector(s metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(&s)
}

// unstructuredString reads a string field by path from an unstructured object.
func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}
