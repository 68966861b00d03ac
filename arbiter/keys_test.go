package arbiter

import (
	"testing"
	"time"
)

func bookSlotTool() *Tool { return bookingPolicy().Tools["book_slot"] }

// Case 14: the spec's wordings of one slot are one key, another hour is another.
func TestBusinessKeyDatetime(t *testing.T) {
	tool := bookSlotTool()
	const want = "book_slot(slot=2026-10-02T15:00)" // tomorrow 15:00 from t0
	for _, slot := range []string{"tomorrow 3pm", "tomorrow at 3pm", "Tomorrow at 3 P.M.", "3:00 p.m. tomorrow", "  tomorrow   3pm "} {
		if got := BusinessKey(tool, map[string]any{"slot": slot}, "", t0); got != want {
			t.Errorf("BusinessKey(%q) = %q, want %q", slot, got, want)
		}
	}
	if got := BusinessKey(tool, map[string]any{"slot": "tomorrow 4pm"}, "", t0); got != "book_slot(slot=2026-10-02T16:00)" {
		t.Errorf("BusinessKey(tomorrow 4pm) = %q, want book_slot(slot=2026-10-02T16:00)", got)
	}
	// Relative dates resolve against the call's time.
	later := t0.Add(24 * time.Hour)
	if a, b := BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", t0), BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", later); a == b {
		t.Errorf("tomorrow 3pm on two days gives one key %q", a)
	}
	// Deterministic.
	for i := 0; i < 3; i++ {
		if got := BusinessKey(tool, map[string]any{"slot": "3:00 p.m. tomorrow"}, "", t0); got != want {
			t.Fatalf("run %d: %q", i, got)
		}
	}
}

func TestBusinessKeyOtherNormalisations(t *testing.T) {
	cases := []struct {
		name     string
		tool     *Tool
		a, b     map[string]any
		explicit [2]string
		same     bool
	}{
		{"datetime falls back to text when unparseable",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "slot", As: KeyDatetime}}},
			map[string]any{"slot": "  The  BLUE room"}, map[string]any{"slot": "the blue room"}, [2]string{}, true},
		{"text trims, folds case and collapses space",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "name"}}},
			map[string]any{"name": " Ada  Lovelace "}, map[string]any{"name": "ada lovelace"}, [2]string{}, true},
		{"text keeps different words apart",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "name", As: KeyText}}},
			map[string]any{"name": "Ada"}, map[string]any{"name": "Grace"}, [2]string{}, false},
		{"number: 3.0 and \" 3.0 \" agree",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "n", As: KeyNumber}}},
			map[string]any{"n": 3.0}, map[string]any{"n": " 3.0 "}, [2]string{}, true},
		{"number: 3 and 4 differ",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "n", As: KeyNumber}}},
			map[string]any{"n": 3.0}, map[string]any{"n": 4.0}, [2]string{}, false},
		{"exact keeps case",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "id", As: KeyExact}}},
			map[string]any{"id": "AB"}, map[string]any{"id": "ab"}, [2]string{}, false},
		{"key args only: other args do not matter",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "id", As: KeyExact}}},
			map[string]any{"id": "x", "note": "a"}, map[string]any{"id": "x", "note": "b"}, [2]string{}, true},
		{"no key: the whole args, order-free",
			&Tool{Name: "t"},
			map[string]any{"a": 1.0, "b": "x"}, map[string]any{"b": "x", "a": 1.0}, [2]string{}, true},
		{"no key: any arg counts",
			&Tool{Name: "t"},
			map[string]any{"a": 1.0}, map[string]any{"a": 2.0}, [2]string{}, false},
		{"explicit key wins over the args",
			bookSlotTool(),
			map[string]any{"slot": "tomorrow 3pm"}, map[string]any{"slot": "friday 9am"}, [2]string{"slot-42", "slot-42"}, true},
		{"explicit keys differ",
			bookSlotTool(),
			map[string]any{"slot": "tomorrow 3pm"}, map[string]any{"slot": "tomorrow 3pm"}, [2]string{"slot-42", "slot-43"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := BusinessKey(tc.tool, tc.a, tc.explicit[0], t0)
			b := BusinessKey(tc.tool, tc.b, tc.explicit[1], t0)
			if (a == b) != tc.same {
				t.Errorf("keys %q and %q: same=%v, want %v", a, b, a == b, tc.same)
			}
		})
	}
	// Different tools never share a key.
	if a, b := BusinessKey(&Tool{Name: "a"}, nil, "k", t0), BusinessKey(&Tool{Name: "b"}, nil, "k", t0); a == b {
		t.Errorf("tools a and b share key %q", a)
	}
}

// dateBenchCases are the wordings BenchmarkBusinessKeyDatetime keys, one per language.
var dateBenchCases = []struct{ lang, slot string }{
	{"en", "tomorrow at 3pm"}, {"es", "mañana a las 3pm"}, {"fr", "demain à 15h"}, {"de", "morgen um 15 Uhr"},
}

// BenchmarkBusinessKeyDatetime keys an `as: datetime` argument: hit, the same wording
// at the same minute again (the memo answers); miss, a new minute every time (a parse).
func BenchmarkBusinessKeyDatetime(b *testing.B) {
	tool := bookSlotTool()
	for _, c := range dateBenchCases {
		args := map[string]any{"slot": c.slot}
		b.Run("hit/"+c.lang, func(b *testing.B) {
			BusinessKey(tool, args, "", t0)
			b.ReportAllocs()
			for b.Loop() {
				BusinessKey(tool, args, "", t0)
			}
		})
		b.Run("miss/"+c.lang, func(b *testing.B) {
			at := t0
			b.ReportAllocs()
			for b.Loop() {
				at = at.Add(time.Minute)
				BusinessKey(tool, args, "", at)
			}
		})
	}
}
