package policyfile

import (
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
)

// FuzzParse checks the loader's contract on any input: it never panics; an accepted
// file gives a policy that passes Policy.Validate (again); a refused one gives no
// policy and an arbiter.Invalid error whose message starts with the file name. Seeds:
// the files of the tests above and of the repository.
//
//	go test ./policyfile -run '^$' -fuzz FuzzParse -fuzztime 2m
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		booking, "", "---\n", "defaults:\n  grace: 0s\n", "tools: [{name: a, steps: [{arg: x, ask: y}], confirm: true}]\n",
		"a: &x [*x]\n", "tools:\n  - &t {name: a}\n  - *t\n", "defaults: {<<: {grace: 1s}}\n", "languages: {it: {stop: [a]}}\n",
	} {
		f.Add([]byte(seed))
	}
	for _, data := range repoPolicies(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if p != nil {
				t.Errorf("Parse returned a policy with its error %q", err)
			}
			if k := arbiter.KindOf(err); k != arbiter.Invalid {
				t.Errorf("kind = %v, want invalid (error %q)", k, err)
			}
			if msg := arbiter.MessageOf(err); !strings.HasPrefix(msg, "fuzz.yaml:") {
				t.Errorf("message %q does not start with the file name", msg)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Errorf("Parse accepted a policy that Validate refuses: %v\n%s", err, data)
		}
	})
}
