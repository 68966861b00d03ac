package speech

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// benchSizes are the input sizes of the benchmarks. A model turn's transcript is
// usually under 1 KB; the chaos run that found ReadClaims quadratic sent 256 KB.
var benchSizes = []int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10}

// claimBenchUnits are the inputs of BenchmarkReadClaims, each a unit repeated to the
// size. Most are adversarial: one long clause in which a claim verb is tried at every
// other word and none is licensed.
var claimBenchUnits = []struct{ name, unit string }{
	// The chaos run's input: no subject, so every verb's group reaches back to the start.
	{"went_through", "went through "},
	// Clauses of two words joined by "and", inheriting the topic.
	{"and_chain", "and it and that and I "},
	// A base form after a negation, never licensed (no do-support).
	{"negations", "not book "},
	// A modal before "there is a booking" blocks every later one.
	{"hope_there", "I hope there is a booking "},
	// Relative clauses after a booking noun with no main verb.
	{"relative", "the booking that you asked for "},
	// Model speech with the punctuation stripped.
	{"no_punctuation", "the booking for tomorrow at three pm has already been made i can cancel it if you want would you like me to do that "},
	// Many short sentences, each a claim.
	{"short_sentences", "Done. It’s booked. Sorry. "},
	// Recorded model speech (testdata/traces), repeated.
	{"realistic", "I’m sorry, but the slot has already been booked. Would you like me to cancel it? The booking for tomorrow at 3 p.m. was already made before I could process your cancellation. "},
}

// classifyBenchUnits are the inputs of BenchmarkClassify.
var classifyBenchUnits = []struct{ name, unit string }{
	{"stop_repeated", "stop "},
	{"realistic", "Actually, stop. Don’t book it. "},
	{"no_match", "book me the three pm slot tomorrow please "},
	{"amend", "wait, make it 4pm instead "},
	{"no_spaces", "abcdefghij"},
	{"question", "actually what's the weather like there? "},
}

// repeatTo repeats unit to n bytes, cut back to a rune boundary.
func repeatTo(unit string, n int) string {
	s := strings.Repeat(unit, n/len(unit)+1)[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func sizeName(n int) string { return fmt.Sprintf("%dKB", n>>10) }

func BenchmarkReadClaims(b *testing.B) {
	for _, u := range claimBenchUnits {
		for _, n := range benchSizes {
			s := repeatTo(u.unit, n)
			b.Run(u.name+"/"+sizeName(n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				b.ReportAllocs()
				for b.Loop() {
					_ = Verdict(ReadClaims(s))
				}
			})
		}
	}
}

// BenchmarkVocabularyReadClaims reads a short model turn with ReadClaims (Booking,
// compiled at start) and with Vocabulary.ReadClaims (a tool's vocabulary, looked up by
// content in the compiled cache on every call): the look-up's cost.
func BenchmarkVocabularyReadClaims(b *testing.B) {
	const turn = "I'm sorry, but the message has already been sent. Would you like me to send another one?"
	b.Run("ReadClaims", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Verdict(ReadClaims(turn))
		}
	})
	b.Run("Vocabulary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Verdict(smsVocabulary.ReadClaims(turn))
		}
	})
}

func BenchmarkClassify(b *testing.B) {
	en := DefaultPhrases["en"]
	for _, u := range classifyBenchUnits {
		for _, n := range benchSizes {
			s := repeatTo(u.unit, n)
			b.Run(u.name+"/"+sizeName(n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = Classify(s, en)
				}
			})
		}
	}
}
