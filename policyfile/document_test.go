package policyfile

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDocumentRoundTrip: every policy of the repository, written with Document as
// JSON, reads back to the same policy with the same digest.
func TestDocumentRoundTrip(t *testing.T) {
	for name, data := range repoPolicies(t) {
		p, err := Parse(data, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, err := json.Marshal(Document(p))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q, err := Parse(doc, name+" (document)")
		if err != nil {
			t.Fatalf("%s: the document does not parse: %v\n%s", name, err, doc)
		}
		if !reflect.DeepEqual(p, q) || p.Digest() != q.Digest() {
			a, _ := json.Marshal(p)
			b, _ := json.Marshal(q)
			t.Errorf("%s: the document reads back to another policy:\n%s\n%s", name, a, b)
		}
	}
}
