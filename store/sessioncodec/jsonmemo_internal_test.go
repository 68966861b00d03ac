package sessioncodec

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/storetest"
)

// TestDecodeReusesJSONValues: decoding a session whose arguments, payloads and results
// were decoded before (the record of the previous RPC) parses none of them again: each
// comes from the memo, equal to what json.Unmarshal gives and owned by the caller (a
// change to one decoded session's maps, as the engine makes to an outcome's response,
// shows in no other decode).
func TestDecodeReusesJSONValues(t *testing.T) {
	e := storetest.BenchEngine(t, "../..")
	s := storetest.BusySession(t, e, "memo", 24)
	rec, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	hits, misses := memoHits.Load(), memoMisses.Load()
	second, err := Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	values := jsonValues(second)
	if h, m := memoHits.Load()-hits, memoMisses.Load()-misses; m != 0 || int(h) < len(values) {
		t.Fatalf("second decode: %d memo hits and %d values parsed again, for at least %d JSON values; want every one from the memo", h, m, len(values))
	}
	for i, v := range values {
		b, _ := json.Marshal(v)
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil || !reflect.DeepEqual(v, want) {
			t.Fatalf("value %d: %v, want what json.Unmarshal gives", i, v)
		}
	}
	for _, v := range jsonValues(first) {
		v["changed"] = true
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				m["changed"] = true
			}
		}
	}
	for _, v := range jsonValues(second) {
		if _, ok := v["changed"]; ok {
			t.Fatal("a change to one decoded session's map shows in another")
		}
	}
	third, err := Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(jsonValues(third), jsonValues(second)) {
		t.Fatal("a change to a decoded session's map changed what the memo hands out")
	}
}

// jsonValues are the JSON-shaped values of s: calls' responses, jobs' arguments and
// results, logged responses' payloads.
func jsonValues(s *arbiter.Session) []map[string]any {
	var out []map[string]any
	add := func(m map[string]any) {
		if m != nil {
			out = append(out, m)
		}
	}
	for _, c := range s.Calls {
		if c.Outcome != nil {
			add(c.Outcome.Response)
		}
	}
	for _, j := range s.Jobs {
		add(j.Args)
		add(j.Result)
	}
	for _, x := range s.Log {
		if x.Response != nil {
			add(x.Response.Payload)
		}
	}
	return out
}
