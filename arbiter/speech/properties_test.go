package speech

import (
	"flag"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Properties of the readers that hold whatever the rules are: they are checked over
// statements built from the rules' own vocabulary, random words and punctuation.

// Failing cases are printed, not written under testdata (as in package arbiter).
func init() { _ = flag.Set("rapid.nofailfile", "true") }

// vocabulary is every word the claim reader and the English intent phrases know, in a
// fixed order.
func vocabulary() []string {
	seen := map[string]bool{}
	for _, s := range []wordSet{conjunctions, inverted, invertedSubj, whWords, auxiliaries, skipAdverbs,
		negators, subjects, objPronouns, bookNouns, topicWords, cancelObjs, otherNouns, determiners,
		modals, successWords, failureWords, beForms, haveForms, possessionMods, subjectMods, relVerbs, relTails} {
		for w := range s {
			seen[w] = true
		}
	}
	for _, l := range []phraseList{frames, negFrames, subordinators} {
		for _, ps := range l {
			for _, p := range ps {
				seen[strings.Join(p, " ")] = true
			}
		}
	}
	for w := range verbs {
		seen[w] = true
	}
	for _, ps := range phraseVerbs {
		for _, p := range ps {
			seen[strings.Join(p.words, " ")] = true
		}
	}
	for w := range contractions {
		seen[w] = true
	}
	en := DefaultPhrases["en"]
	for _, l := range [][]string{en.Stop, en.Soft, en.Amend, en.WeakAmend, en.NotStop, en.Correct, en.Bare, en.Refuse,
		en.GoAhead, en.Neutral, en.Hedge, en.ElseCues, en.ActionCues, en.UndoCues} {
		for _, p := range l {
			seen[p] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

var (
	propVocabulary = vocabulary()
	propPunct      = []string{".", "!", "?", ";", ":", ",", "…", "—", "–", "-", " - ", "(", ")", "\"", "“", "”", "'", "’", "p.m.", "a.m.", "3:00", "3.30", "...", "\n", "\xff", "é", "e\u0301", "ß", "İ", "日本"}
	propSuffix     = []string{"'s", "n't", "'d", "'ll", "’re", "n’t", "ed", ""}
)

// statement draws a statement: vocabulary words (some capitalised, some contracted),
// random words and punctuation, with spaces, commas or sentence ends between them.
func statement() *rapid.Generator[string] {
	word := rapid.OneOf(
		rapid.SampledFrom(propVocabulary),
		rapid.Custom(func(t *rapid.T) string {
			return strings.ToUpper(rapid.SampledFrom(propVocabulary).Draw(t, "upper"))
		}),
		rapid.Custom(func(t *rapid.T) string {
			return rapid.SampledFrom(propVocabulary).Draw(t, "w") + rapid.SampledFrom(propSuffix).Draw(t, "suffix")
		}),
		rapid.SampledFrom(propPunct),
		rapid.StringMatching(`[A-Za-z]{1,8}`),
		rapid.String(),
	)
	sep := rapid.SampledFrom([]string{" ", " ", " ", "", ", ", ". ", "? ", " and "})
	return rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		for _, w := range rapid.SliceOfN(word, 0, 40).Draw(t, "words") {
			b.WriteString(w)
			b.WriteString(sep.Draw(t, "sep"))
		}
		return b.String()
	})
}

// fataler is what the checks need of *testing.T and *rapid.T.
type fataler interface {
	Fatalf(format string, args ...any)
}

// checkClaims checks what ReadClaims promises of any input: no panic, the same answer
// twice, only done or not_done, and clauses that are non-empty pieces of the input,
// in order.
func checkClaims(t fataler, s string) []Claim {
	got := ReadClaims(s)
	if again := ReadClaims(s); !reflect.DeepEqual(got, again) {
		t.Fatalf("ReadClaims(%q) not deterministic: %+v then %+v", s, got, again)
	}
	pos := 0
	for _, c := range got {
		if c.Kind != ClaimDone && c.Kind != ClaimNotDone {
			t.Fatalf("ReadClaims(%q): kind %q", s, c.Kind)
		}
		i := strings.Index(s[pos:], c.Clause)
		if c.Clause == "" || i < 0 {
			t.Fatalf("ReadClaims(%q): clause %q is not in the input after byte %d", s, c.Clause, pos)
		}
		pos += i + len(c.Clause)
	}
	return got
}

func TestReadClaimsProperties(t *testing.T) {
	if v := Verdict(nil); v != ClaimNone {
		t.Fatalf("Verdict(nil) = %q", v)
	}
	rapid.Check(t, func(t *rapid.T) {
		s := statement().Draw(t, "s")
		got := checkClaims(t, s)
		// A clause of its own that says nothing changes nothing before it. (Without
		// the dash, " Okay." joins the last clause and can change it: "Completed
		// successfully" is a done fragment, "Completed successfully okay" no claim.)
		if after := ReadClaims(s + " — Okay."); !reflect.DeepEqual(after, got) {
			t.Fatalf("ReadClaims(%q) = %+v, but with \" — Okay.\" appended %+v", s, got, after)
		}
		if en := ReadClaimsIn("en-GB", s); !reflect.DeepEqual(en, got) {
			t.Fatalf("ReadClaimsIn(en-GB, %q) = %+v, ReadClaims %+v", s, en, got)
		}
		if fr := ReadClaimsIn("fr", s); fr != nil {
			t.Fatalf("ReadClaimsIn(fr, %q) = %+v", s, fr)
		}
		// Verdict ignores ClaimNone entries and returns one of the three kinds.
		v := Verdict(got)
		if padded := Verdict(append([]Claim{{}}, append(slices.Clone(got), Claim{})...)); padded != v {
			t.Fatalf("Verdict with ClaimNone entries %q, without %q", padded, v)
		}
		if v != ClaimNone && v != ClaimDone && v != ClaimNotDone {
			t.Fatalf("Verdict %q", v)
		}
		if (v == ClaimNone) != (len(got) == 0) {
			t.Fatalf("Verdict %q of %+v", v, got)
		}
	})
}

// checkClassify checks what Classify promises of any input: no panic, the same answer
// twice, and a deciding phrase that is one of the phrases given and occurs in the
// utterance's words.
func checkClassify(t fataler, s string, p Phrases) {
	in, phrase := Classify(s, p)
	if in2, phrase2 := Classify(s, p); in2 != in || phrase2 != phrase {
		t.Fatalf("Classify(%q) not deterministic: %s %q then %s %q", s, in, phrase, in2, phrase2)
	}
	checkReading(t, s, p, in, phrase)
}

// checkReading checks that a reading of s under p (in, decided by phrase) is one of
// the intents and that its phrase is one of the phrases given for it, occurring in
// the utterance's words.
func checkReading(t fataler, s string, p Phrases, in Intent, phrase string) {
	words := Words(s)
	one := func(lists ...[]string) bool {
		return slices.ContainsFunc(lists, func(l []string) bool { return slices.Contains(l, phrase) })
	}
	switch in {
	case IntentUnknown, IntentOther:
		if phrase != "" {
			t.Fatalf("Classify(%q) = %s with phrase %q", s, in, phrase)
		}
		if in == IntentUnknown && len(words) != 0 {
			t.Fatalf("Classify(%q) = %s, words %q", s, in, words)
		}
		return
	case IntentStop:
		if !one(p.Stop, p.Soft, p.Bare, p.Refuse, p.GoAhead) {
			t.Fatalf("Classify(%q) = stop by %q, not a stop phrase", s, phrase)
		}
	case IntentAmend:
		if !one(p.Amend, p.WeakAmend, p.Correct, p.Bare, p.Refuse) {
			t.Fatalf("Classify(%q) = amend by %q, not an amend phrase", s, phrase)
		}
	case IntentGoAhead, IntentUnclear:
		if phrase == "" {
			return // a reply of neutral words
		}
		if !one(p.GoAhead, p.Refuse, p.Hedge, p.Stop, p.Soft, p.Bare, p.Amend, p.WeakAmend, p.Correct) {
			t.Fatalf("Classify(%q) = %s by %q, not a reply phrase", s, in, phrase)
		}
	default:
		t.Fatalf("Classify(%q) = %q", s, in)
	}
	pw := Words(phrase)
	for i := range words {
		if hasPrefix(words[i:], pw) {
			return
		}
	}
	t.Fatalf("Classify(%q) decided by %q, whose words %q are not in %q", s, phrase, pw, words)
}

// TestWordBreaksProperties: the break scan sees the words Words sees, so the breaks
// line up with them.
func TestWordBreaksProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Normalize(rapid.OneOf(statement(), rapid.String()).Draw(t, "s"))
		n := 0
		scanBreaks(s, func(k int, b byte) {
			if k != n {
				t.Fatalf("scanBreaks(%q): word %d after %d", s, k, n)
			}
			n++
		})
		if w := Words(s); len(w) != n {
			t.Fatalf("scanBreaks(%q) sees %d words, Words %d: %q", s, n, len(w), w)
		}
	})
}

func TestClassifyProperties(t *testing.T) {
	phrase := rapid.OneOf(rapid.SampledFrom(propVocabulary), rapid.SampledFrom(propPunct), rapid.StringMatching(`[A-Za-z' ]{0,12}`))
	list := rapid.SliceOfN(phrase, 0, 6)
	rapid.Check(t, func(t *rapid.T) {
		s := statement().Draw(t, "s")
		for _, lang := range []string{"en", "es", "fr", "de", "zh", "ja", "th"} {
			checkClassify(t, s, DefaultPhrases[lang])
		}
		p := Phrases{Stop: list.Draw(t, "stop"), Soft: list.Draw(t, "soft"), Amend: list.Draw(t, "amend"), WeakAmend: list.Draw(t, "weak"),
			NotStop: list.Draw(t, "notstop"), Correct: list.Draw(t, "correct"), Bare: list.Draw(t, "bare"), Refuse: list.Draw(t, "refuse"),
			GoAhead: list.Draw(t, "goahead"), Neutral: list.Draw(t, "neutral"), Hedge: list.Draw(t, "hedge")}
		checkClassify(t, s, p)
		// A last sentence that says only "Stop." stops, whatever came before: no
		// NotStop phrase or correction reaches across a sentence end.
		if got, by := Classify(s+". Stop.", DefaultPhrases["en"]); got != IntentStop || by != "stop" {
			t.Fatalf("Classify(%q) = %s (%q), want stop by \"stop\"", s+". Stop.", got, by)
		}
		// Phrases are read by value: a copy classifies alike, and a list changed in
		// place after a call classifies by its new content.
		in, ph := Classify(s, p)
		cp := Phrases{Stop: slices.Clone(p.Stop), Soft: slices.Clone(p.Soft), Amend: slices.Clone(p.Amend), WeakAmend: slices.Clone(p.WeakAmend),
			NotStop: slices.Clone(p.NotStop), Correct: slices.Clone(p.Correct), Bare: slices.Clone(p.Bare), Refuse: slices.Clone(p.Refuse),
			GoAhead: slices.Clone(p.GoAhead), Neutral: slices.Clone(p.Neutral), Hedge: slices.Clone(p.Hedge)}
		if in2, ph2 := Classify(s, cp); in2 != in || ph2 != ph {
			t.Fatalf("Classify(%q) = %s %q, with a copy of the phrases %s %q", s, in, ph, in2, ph2)
		}
		if len(p.Stop) > 0 {
			p.Stop[0] = "zzz unlikely"
			cp.Stop[0] = "zzz unlikely"
			in, ph = Classify(s, p)
			cp.Stop = slices.Clone(cp.Stop)
			if in2, ph2 := Classify(s, cp); in2 != in || ph2 != ph {
				t.Fatalf("Classify(%q) after changing a phrase in place = %s %q, want %s %q", s, in, ph, in2, ph2)
			}
		}
	})
}

// FuzzClassify checks that any utterance classifies without panicking, the same way
// twice, with a deciding phrase taken from the language's phrases.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"Actually, stop. Don't book it.", "Wait, make it 4pm.", "Actually, Lyon.",
		"What's the weather like there?", "Make it", "...", "¡Detente! No lo hagas.", "arre\u0302te",
		"HÖR AUF", "Don’t", "\xff\xfe", "İstanbul", "ﬁne", "stop stop stop", ""} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	langs := []string{"en", "es", "fr", "de", "zh", "ja", "th"}
	f.Fuzz(func(t *testing.T, s string, lang uint8) {
		checkClassify(t, s, DefaultPhrases[langs[int(lang)%len(langs)]])
	})
}

// TestClassifyRound3Properties: each stop of round3Stops is a stop after any
// statement and a sentence end; each refusal of round3Refusals too, once the statement
// has words that are not a reply's (a refusal said after the user's own words is never
// read as consent; one that only follows reply words is a reply: unclear with nothing
// asked); and each look-alike of round3Others said alone after a sentence that stops
// still stops (a look-alike never undoes a stop before it).
func TestClassifyRound3Properties(t *testing.T) {
	en := DefaultPhrases["en"]
	rapid.Check(t, func(t *rapid.T) {
		s := statement().Draw(t, "s")
		stop := rapid.SampledFrom(round3Stops).Draw(t, "stop")
		if got, by := Classify(s+". "+stop, en); got != IntentStop {
			t.Fatalf("Classify(%q) = %s (%q), want stop", s+". "+stop, got, by)
		}
		refusal := rapid.SampledFrom(round3Refusals).Draw(t, "refusal")
		u := Normalize(s + ". " + refusal)
		w := Words(u)
		want := IntentStop
		if h, _ := readHead(w, wordBreaks(u, len(w)), en); h.end == len(w) {
			want = IntentUnclear
		}
		if got, by := Classify(u, en); got != want {
			t.Fatalf("Classify(%q) = %s (%q), want %s", u, got, by, want)
		}
		lang := rapid.SampledFrom([]string{"es", "fr", "de"}).Draw(t, "lang")
		stop = rapid.SampledFrom(round3Languages[lang]).Draw(t, "langStop")
		if got, by := Classify(s+". "+stop, DefaultPhrases[lang]); got != IntentStop {
			t.Fatalf("%s: Classify(%q) = %s (%q), want stop", lang, s+". "+stop, got, by)
		}
		other := rapid.SampledFrom(round3Others).Draw(t, "other")
		if got, by := Classify("Stop. "+other, en); got != IntentStop {
			t.Fatalf("Classify(%q) = %s (%q), want stop", "Stop. "+other, got, by)
		}
	})
}
