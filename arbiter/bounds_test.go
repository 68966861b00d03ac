package arbiter

import (
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// longPiece is one transcript piece of n bytes of repeated words (the chaos run's
// "went through " that made the claim check quadratic).
func longPiece(words string, n int) string {
	return strings.Repeat(words, n/len(words)+1)[:n]
}

// TestTextIsBounded: issue 12. Sixteen 16 KiB model transcript pieces, or a user
// utterance of ten, no longer grow the session without bound: a model turn keeps its
// last speech.MaxTurnBytes, an utterance its last MaxUtteranceBytes, and what decides is
// in the tail (the utterance's stop at its end is heard).
func TestTextIsBounded(t *testing.T) {
	sp := newStepper(t, bookingPolicy())
	sp.do(0, RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}})
	for i := 0; i < 16; i++ {
		sp.do(100+i, Transcript{Model: true, Text: longPiece("went through ", MaxTextBytes)})
		if n := len(sp.s.ModelTurns.Text); n > speech.MaxTurnBytes {
			t.Fatalf("after piece %d the model turn holds %d bytes, over %d", i+1, n, speech.MaxTurnBytes)
		}
	}
	sp.do(200, Speech{Kind: ModelTurnComplete})
	sp.do(1000, Speech{Kind: UserActivityStart})
	var out Output
	for i := 0; i < 10; i++ {
		text := longPiece("and then I said ", MaxTextBytes-20)
		if i == 9 {
			text += " no, stop, stop."
		}
		out = sp.do(1100+i, Transcript{Text: text})
	}
	u := sp.s.Utterances[len(sp.s.Utterances)-1]
	if len(u.Text) > MaxUtteranceBytes || !strings.HasSuffix(u.Text, "no, stop, stop.") {
		t.Fatalf("utterance holds %d bytes (at most %d) ending %q", len(u.Text), MaxUtteranceBytes, u.Text[max(0, len(u.Text)-30):])
	}
	if out.Intent != speech.IntentStop || sp.s.Jobs[0].Decision != DecisionCancel {
		t.Fatalf("the stop at the end of a long utterance: intent %q, job %s", out.Intent, orPending(sp.s.Jobs[0].Decision))
	}
	b, err := EncodeSession(sp.s)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 64<<10 {
		t.Fatalf("the stored session is %d bytes after 26 pieces of 16 KiB; the bounds keep it far smaller", len(b))
	}
}

// BenchmarkLongModelTurn is the chaos run's RPC: sixteen 16 KiB model transcript
// pieces, then the turn's end, which reads its claims (22.6 s of CPU in one RPC before
// the claim reader was linear and turns bounded). One op is the whole turn; the stored
// session's size is reported.
func BenchmarkLongModelTurn(b *testing.B) {
	e := &Engine{Policy: bookingPolicy()}
	piece := longPiece("went through ", MaxTextBytes)
	var size int
	for i := 0; i < b.N; i++ {
		s := NewSession(SessionKey{ID: "long"}, ms(0))
		if _, err := e.Step(s, ms(0), RegisterCall{CallID: "c1", Tool: "book_slot", Args: map[string]any{"slot": "tomorrow 3pm"}}); err != nil {
			b.Fatal(err)
		}
		for p := 0; p < 16; p++ {
			if _, err := e.Step(s, ms(100+p), Transcript{Model: true, Text: piece}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.Step(s, ms(200), Speech{Kind: ModelTurnComplete}); err != nil {
			b.Fatal(err)
		}
		enc, _ := EncodeSession(s)
		size = len(enc)
	}
	b.ReportMetric(float64(size), "session-bytes")
}
