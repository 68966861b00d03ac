package policyfile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/voicearbiter/arbiter/arbiter"
)

var update = flag.Bool("update", false, "rewrite testdata/repo_policies.json from what the loader gives")

// repoPolicies are the tool-policy files of the repository, by name: files, and the
// policies the Helm chart's values embed as text under tools.policy (name FILE#tools.policy).
func repoPolicies(t testing.TB) map[string][]byte {
	t.Helper()
	paths := []string{"testdata/tools/booking.yaml", "testdata/workflows/tools.yaml", "clients/e2e/workflow.yaml"}
	scenarios, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		paths = append(paths, filepath.ToSlash(strings.TrimPrefix(s, ".."+string(filepath.Separator))))
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = data
	}
	for _, p := range []string{"deploy/helm/arbiter/values.yaml", "deploy/helm/values-production.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		var values struct {
			Tools struct {
				Policy string `yaml:"policy"`
			} `yaml:"tools"`
		}
		if err := yaml.Unmarshal(data, &values); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if values.Tools.Policy == "" {
			t.Fatalf("%s: no tools.policy", p)
		}
		out[p+"#tools.policy"] = []byte(values.Tools.Policy)
	}
	return out
}

// TestRepoPolicies loads every tool-policy file of the repository and compares the
// policy with testdata/repo_policies.json, which the hand-written AST reader that came
// before the struct decoder produced (so the rewrite changed no policy). JSON keeps the
// difference between a nil and an empty list or map. -update rewrites the file.
func TestRepoPolicies(t *testing.T) {
	got := map[string]*arbiter.Policy{}
	for name, data := range repoPolicies(t) {
		p, err := Parse(data, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got[name] = p
	}
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	golden := filepath.Join("testdata", "repo_policies.json")
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		var w map[string]json.RawMessage
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		for name, p := range got {
			g, _ := json.MarshalIndent(p, "  ", "  ")
			if !bytes.Equal(g, w[name]) {
				t.Errorf("%s loads to\n  %s\nwant\n  %s", name, g, w[name])
			}
		}
		if len(w) != len(got) {
			t.Errorf("%d policies, want %d (-update after adding a policy file)", len(got), len(w))
		}
	}
}
