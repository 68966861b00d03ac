package arbiter

import (
	"bytes"
	"testing"
	"time"
)

// TestMalformedInputRefused: issue 25, item 8. A malformed epoch is INVALID_ARGUMENT
// naming `epoch` (it was DATA_LOSS, "session was lost", and clients marked every outcome
// unknown); a control character in a transcript or a business key is refused naming the
// field (it was kept and echoed); an age far beyond its bound is refused naming `age`
// (it was taken as 60 s, silently). Each leaves the session as it was.
func TestMalformedInputRefused(t *testing.T) {
	old := ms(0).Add(-MaxAge - time.Second) // observed 5 min 1 s before t=0
	cases := []struct {
		name  string
		ev    Event
		field string
	}{
		{"epoch too short", RegisterCall{CallID: "c9", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm"}, Epoch: "abc"}, "epoch"},
		{"epoch upper case", Speech{Kind: UserActivityStart, Epoch: "XDTS00"}, "epoch"},
		{"epoch with a space", Transcript{Text: "hello", Epoch: "xdts 0"}, "epoch"},
		{"epoch too long", Configure{Language: "en", Epoch: "xdts000"}, "epoch"},
		{"epoch of connect", Connect{ConnectionID: "conn-2", Epoch: "../../"}, "epoch"},
		{"NUL in a transcript", Transcript{Text: "stop\x00 it"}, "text"},
		{"bell in a model transcript", Transcript{Model: true, Text: "done\a"}, "text"},
		{"escape in a transcript", Transcript{Text: "\x1b[2Jbook it"}, "text"},
		{"DEL in a transcript", Transcript{Text: "book\x7f it"}, "text"},
		{"C1 control in a transcript", Transcript{Text: "book\u0085it"}, "text"},
		{"invalid UTF-8 in a transcript", Transcript{Text: "book \xff it"}, "text"},
		{"newline in a business key", RegisterCall{CallID: "c9", Tool: "book_slot", Args: map[string]any{"slot": "x"}, BusinessKey: "slot\n42"}, "business_key"},
		{"NUL in a business key", RegisterCall{CallID: "c9", Tool: "book_slot", Args: map[string]any{"slot": "x"}, BusinessKey: "slot\x0042"}, "business_key"},
		{"age of a call", RegisterCall{CallID: "c9", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 4pm"}, ObservedAt: old}, "age"},
		{"age of speech", Speech{Kind: UserActivityStart, ObservedAt: old}, "age"},
		{"age of a transcript", Transcript{Text: "stop", ObservedAt: old}, "age"},
		{"age of a cancellation", ToolCallCancellation{CallIDs: []string{"c1"}, ObservedAt: old}, "age"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp := newStepper(t, bookingPolicy())
			sp.do(-1000, Connect{ConnectionID: "conn-1"})
			sp.do(-900, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
			before, _ := EncodeSession(sp.s)
			_, err := sp.e.Step(sp.s, ms(0), c.ev)
			if KindOf(err) != Invalid || FieldOf(err) != c.field {
				t.Fatalf("Step = %v (kind %s, field %q), want invalid naming %q", err, KindOf(err), FieldOf(err), c.field)
			}
			if after, _ := EncodeSession(sp.s); !bytes.Equal(before, after) {
				t.Errorf("the refused event changed the session")
			}
		})
	}
}

// TestTextAllowed: what the text rule lets through (so the refusals above are not a
// blanket one): tab, line feed and carriage return in a transcript, Unicode format
// characters, U+FFFD itself, an age at the bound.
func TestTextAllowed(t *testing.T) {
	for _, ev := range []Event{
		Transcript{Text: "book it\tplease\r\nthanks"},
		Transcript{Text: "sto\u200bp"},
		Transcript{Text: "caf\uFFFD"},
		Transcript{Text: "明天下午三点"},
		RegisterCall{CallID: "c2", Tool: "book_slot", Args: map[string]any{"slot": "x"}, BusinessKey: "slot 42 (room b)"},
		Speech{Kind: UserActivityStart, ObservedAt: ms(0).Add(-MaxAge)},
	} {
		sp := newStepper(t, bookingPolicy())
		if _, err := sp.e.Step(sp.s, ms(0), ev); err != nil {
			t.Errorf("%T%+v: %v", ev, ev, err)
		}
	}
}

func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"plain":              "plain",
		"tab\tnl\ncr\r":      "tab\tnl\ncr\r",
		"nul\x00x":           "nul\uFFFDx",
		"bad \xff utf":       "bad \uFFFD utf",
		"c1\u0085 del\x7f":   "c1\uFFFD del\uFFFD",
		"keeps \uFFFD as is": "keeps \uFFFD as is",
	} {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}
