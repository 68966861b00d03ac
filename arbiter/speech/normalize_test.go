package speech

import (
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"stop", "stop"},
		{"sto\u200bp", "stop"},                   // zero-width space
		{"sto\u200cp", "stop"},                   // zero-width non-joiner
		{"sto\u200dp", "stop"},                   // zero-width joiner
		{"\ufeffstop", "stop"},                   // byte-order mark
		{"sto\u00adp", "stop"},                   // soft hyphen
		{"\u200estop\u200f", "stop"},             // bidi marks
		{"\u202bstop\u202c", "stop"},             // bidi embedding
		{"\u2066stop\u2069", "stop"},             // bidi isolate
		{"sto\u2060p", "stop"},                   // word joiner
		{"3\u00a0pm", "3 pm"},                    // no-break space
		{"3\u202fpm", "3 pm"},                    // narrow no-break space
		{"３ｐｍ", "3pm"},                           // fullwidth
		{"ＳＴＯＰ", "STOP"},                         // fullwidth letters; case is kept
		{"ﬁne", "fine"},                          // ligature
		{"arre\u0302te", "arrête"},               // composed, as NFC does
		{"Ａｃｔｕａｌｌｙ？", "Actually?"},               // fullwidth question mark
		{"mañana a las 3pm", "mañana a las 3pm"}, // nothing to do
		{"", ""},
		{"a\xff\xfeb", "a\ufffdb"}, // invalid UTF-8
		{"é\xff", "é\ufffd"},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// formatChars are format characters (Cf) a transcript or a model's arguments carry.
var formatChars = []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a", "\u202c", "\u2066", "\u2069"}

// TestClassifyNormalised: format characters, no-break spaces and fullwidth forms in an
// utterance do not hide its intent.
func TestClassifyNormalised(t *testing.T) {
	cases := []struct {
		text string
		want Intent
	}{
		{"sto\u200bp", IntentStop},
		{"Actually, sto\u200bp. Don't book it.", IntentStop},
		{"\ufeffStop!", IntentStop},
		{"can\u00adcel it", IntentStop},
		{"don\u200dt", IntentStop},
		{"never\u00a0mind", IntentStop},
		{"ＳＴＯＰ", IntentStop},
		{"ｃａｎｃｅｌ ｉｔ", IntentStop},
		{"\u202bstop\u202c", IntentStop},
		{"make\u200b it 4pm", IntentAmend},
		{"Actually, what's the weather there？", IntentOther}, // fullwidth question mark: a question
		{"\u200b\u200b", IntentUnknown},
	}
	for _, c := range cases {
		if got, phrase := Classify(c.text, DefaultPhrases["en"]); got != c.want {
			t.Errorf("Classify(%q) = %s (%q), want %s", c.text, got, phrase, c.want)
		}
	}
}

// TestNormalizeProperties: Normalize is idempotent, leaves no format character and
// only ever changes non-ASCII text; a stop phrase with format characters inserted
// anywhere is still a stop.
func TestNormalizeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), statement(), rapid.StringOf(rapid.SampledFrom([]rune("a3 \u200b\u00a0\ufeff\u00ad\u200eｐｍ３ﬁe\u0301?？")))).Draw(t, "s")
		n := Normalize(s)
		if again := Normalize(n); again != n {
			t.Fatalf("Normalize not idempotent on %q: %q then %q", s, n, again)
		}
		if strings.IndexFunc(n, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) >= 0 {
			t.Fatalf("Normalize(%q) = %q keeps a format character", s, n)
		}
		if isASCII(s) && n != s {
			t.Fatalf("Normalize(%q) = %q changed ASCII text", s, n)
		}
		if a, b := Words(s), Words(n); strings.Join(a, " ") != strings.Join(b, " ") {
			t.Fatalf("Words(%q) = %q, of its normal form %q", s, a, b)
		}
	})
	en := DefaultPhrases["en"]
	rapid.Check(t, func(t *rapid.T) {
		phrase := rapid.SampledFrom(en.Stop).Draw(t, "stop")
		rs := []rune(phrase)
		var b strings.Builder
		for i, r := range rs {
			b.WriteRune(r)
			if i < len(rs)-1 && rapid.Bool().Draw(t, "insert") {
				b.WriteString(rapid.SampledFrom(formatChars).Draw(t, "cf"))
			}
		}
		s := rapid.SampledFrom([]string{"", "Actually, ", "No, ", "\ufeff"}).Draw(t, "before") + b.String() + rapid.SampledFrom([]string{"", ".", "!", " it.", "\u200b"}).Draw(t, "after")
		if got, by := Classify(s, en); got != IntentStop {
			t.Fatalf("Classify(%q) = %s (%q), want stop (the stop phrase %q with format characters)", s, got, by, phrase)
		}
	})
}

func TestNormalizeASCIIAllocatesNothing(t *testing.T) {
	s := "Actually, stop. Don't book it."
	if n := testing.AllocsPerRun(100, func() { _ = Normalize(s) }); n != 0 {
		t.Fatalf("Normalize of ASCII text: %v allocations", n)
	}
}
