package speech

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// Intent is what a user utterance means for a pending job.
type Intent string

// The intents of an utterance.
const (
	// IntentStop: the user wants the pending action not to happen ("stop", "don't",
	// "never mind", "cancel it"). Undecided jobs are cancelled.
	IntentStop Intent = "stop"
	// IntentAmend: the user changes the request ("wait, make it 4pm", "actually,
	// Lyon", "change it to Friday", "no, the five o'clock one"). The pending job is
	// cancelled (its arguments are no longer what the user wants) with a note asking
	// the model to call the tool again with the new details; that new call is a new
	// job, not cancelled by the same utterance.
	IntentAmend Intent = "amend"
	// IntentGoAhead: the user says yes to the pending action, or a refusal answers
	// another question ("No, that's all." after "Anything else?"): releases the hold,
	// and answers the arbiter's question about the action (Context.Asked).
	IntentGoAhead Intent = "go_ahead"
	// IntentUnclear: the words cannot say whether the user still wants the pending
	// action (issue 25): a bare refusal ("No.") when nothing tells what it refuses, a
	// hedge ("I'm not sure"), a reply whose target is ambiguous. The engine holds the
	// commit and asks (the policy's on_unclear).
	IntentUnclear Intent = "unclear"
	// IntentOther: anything else (a follow-up question, thanks): releases the hold.
	IntentOther Intent = "other"
	// IntentUnknown: nothing to read (no words): treated like other for holds.
	IntentUnknown Intent = "unknown"
)

// Phrases are one language's intent phrases. Matching is on whole words, after
// Normalize (format characters dropped, Unicode NFKC) and case folding, with
// apostrophes dropped ("don’t" = "dont", "sto\u200bp" = "stop").
type Phrases struct {
	// Stop phrases cancel: "stop", "don't", "never mind".
	Stop []string
	// Soft stop phrases ("wait", "hold on") cancel when alone, but an amendment in the
	// same utterance wins over them ("wait, make it 4pm").
	Soft []string
	// Amend markers introduce a change ("make it", "change it to", "instead"). The
	// later of the last stop and the last amend marker decides; a marker alone, with no
	// other words (the new details), does not count.
	Amend []string
	// Weak amend markers ("actually", "rather") count only in a short statement
	// (at most four words besides the marker) that is not a question:
	// "actually, Lyon" amends, "actually, what's the weather there?" does not.
	WeakAmend []string
	// NotStop phrases hold a stop or soft stop phrase's words without asking to stop
	// ("don't stop", "don't forget"): a stop phrase that begins inside one, with no
	// punctuation between its words, does not count ("Don't stop, book it." is no stop;
	// "Don't! Stop!" is).
	NotStop []string `json:",omitempty"`
	// Correct markers correct the request when they begin a sentence that goes on
	// past a comma ("not" in "Not Friday, Saturday"): the sentence amends, at the
	// marker's place, as an Amend marker does.
	Correct []string `json:",omitempty"`
	// Bare stop words ("no") refuse only as a clause of their own, a run of them
	// between the start of a sentence or a comma and a comma or a sentence end: such a
	// clause that ends its sentence stops ("No.", "No!", "No, no."); one that a comma
	// and more words of the same sentence follow corrects ("No, Saturday."), at its
	// place, as a Correct marker does. Inside a longer clause they are nothing ("No
	// problem", "no worries"). Issue 13, round 2: a bare "No." while a booking was
	// pending committed it.
	Bare []string `json:",omitempty"`
}

// DefaultLanguage is the language of a session that does not say.
const DefaultLanguage = "en"

// DefaultPhrases are the built-in phrase sets by language (BCP 47 primary subtag).
// Policy.Languages replaces a language's set; Policy.StopPhrases replaces English
// stop phrases.
var DefaultPhrases = map[string]Phrases{
	"en": {
		Stop: []string{"stop", "cancel", "don't", "do not", "never mind", "nevermind", "forget it", "forget about it", "scratch that", "abort",
			"nope", "no no", "changed my mind", "change my mind", "hold off",
			"nah", "no thanks", "no thank you", "not yet", "not now", "i said no", "skip it", "skip that", "drop it", "drop that",
			"call it off", "call that off", "let's not", "let us not", "undo"},
		Soft: []string{"wait", "hold on", "hang on", "change of plans", "change of plan", "hold it", "hold up", "pause",
			"let me think about it", "let me think about that", "let me think it over"},
		Amend: []string{"make it", "change it to", "change that to", "change it", "instead", "switch to", "switch it to", "move it to", "no the", "how about", "let's do", "lets do", "can we do", "go with",
			"i meant", "change of plans", "change of plan", "make that"},
		WeakAmend: []string{"actually", "rather"},
		NotStop: []string{"don't stop", "do not stop", "don't forget", "do not forget", "don't cancel", "do not cancel", "don't wait", "do not wait", "never stop",
			"don't worry", "do not worry", "don't mind", "do not mind", "can't wait", "cannot wait", "bus stop"},
		Correct: []string{"not"},
		Bare:    []string{"no"},
	},
	"es": {
		Stop: []string{"mejor no", "para ya", "páralo", "detente", "alto", "cancela", "cancélalo", "cancelalo", "no lo hagas", "no reserves", "olvídalo", "olvidalo", "déjalo", "dejalo",
			"stop", "no no", "no lo reserves", "cambié de opinión", "cambie de opinion", "cambiado de opinión", "cambiado de opinion",
			"ahora no", "todavía no", "todavia no"},
		Soft:      []string{"espera", "un momento"},
		Amend:     []string{"mejor", "cámbialo a", "cambialo a", "cambia a", "en vez de", "en lugar de", "hazlo a las", "no el", "no la", "quise decir", "quería decir", "queria decir"},
		WeakAmend: []string{"en realidad"},
		Bare:      []string{"no", "para"},
	},
	"fr": {
		Stop: []string{"arrête", "arrêtez", "stop", "annule", "annulez", "laisse tomber", "ne le fais pas", "ne réserve pas", "oublie",
			"non non", "changé d'avis", "change d'avis", "pas maintenant", "pas encore"},
		Soft:      []string{"attends", "attendez", "une seconde"},
		Amend:     []string{"plutôt", "change pour", "mets", "mettez", "à la place", "non le", "non la", "je voulais dire"},
		WeakAmend: []string{"en fait", "finalement"},
		Correct:   []string{"pas"},
		Bare:      []string{"non"},
	},
	"de": {
		Stop: []string{"stopp", "stop", "halt", "hör auf", "abbrechen", "brich ab", "storniere", "lass es", "vergiss es", "nicht buchen",
			"nein nein", "anders überlegt", "anders uberlegt", "anders ueberlegt", "nicht jetzt", "noch nicht"},
		Soft:      []string{"warte", "moment"},
		Amend:     []string{"lieber", "stattdessen", "mach es", "ändere es auf", "nein den", "nein die", "nein das", "ich meinte"},
		WeakAmend: []string{"eigentlich"},
		Correct:   []string{"nicht"},
		Bare:      []string{"nein"},
	},
}

// folder is shared by every call: a Caser may be stateful, but the case folder of
// golang.org/x/text/cases keeps no state (fold.go: caseFolder is a NopResetter).
var folder = cases.Fold()

// Words normalises text for intent matching: Normalize (format characters dropped,
// Unicode NFKC), case folding, apostrophes dropped, split into words of letters and
// digits. It takes time linear in len(text) and is safe for concurrent use; the caller
// owns the returned slice.
func Words(text string) []string {
	if w, ok := asciiWords(text); ok {
		return w
	}
	s := Normalize(text)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ':
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Fields(folder.String(b.String()))
}

// asciiWords is Words for ASCII text, where NFC changes nothing and case folding is
// lower-casing; ok is false, with no result, when text is not ASCII.
func asciiWords(text string) (words []string, ok bool) {
	b := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c >= utf8.RuneSelf:
			return nil, false
		case c == '\'' || c == '`':
		case 'A' <= c && c <= 'Z':
			b = append(b, c+('a'-'A'))
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			b = append(b, c)
		default:
			b = append(b, ' ')
		}
	}
	return strings.Fields(string(b)), true
}

// lastIndex returns the word index of the last occurrence in words of any phrase of
// x, the phrase as given, and its length in words; -1 when none occurs. Of phrases
// that occur at the same index, the longest wins, then the first in the list. It looks
// at each word once.
func lastIndex(words []string, x *phraseIndex) (int, string, int) {
	for i := len(words) - 1; i >= 0; i-- {
		for _, p := range x.byFirst[words[i]] {
			if hasPrefix(words[i:], p.words) {
				return i, p.text, len(p.words)
			}
		}
	}
	return -1, "", 0
}

// phraseIndex is one list of phrases normalised by Words and indexed by first word.
type phraseIndex struct {
	phrases []string                   // the list as given (a copy)
	byFirst map[string][]indexedPhrase // longest first, then in list order
}

type indexedPhrase struct {
	text  string   // as given, which Classify returns
	words []string // Words(text), not empty
}

func newPhraseIndex(phrases []string) *phraseIndex {
	x := &phraseIndex{phrases: slices.Clone(phrases), byFirst: map[string][]indexedPhrase{}}
	for _, p := range phrases {
		if w := Words(p); len(w) > 0 {
			x.byFirst[w[0]] = append(x.byFirst[w[0]], indexedPhrase{p, w})
		}
	}
	for _, ps := range x.byFirst {
		slices.SortStableFunc(ps, func(a, b indexedPhrase) int { return len(b.words) - len(a.words) })
	}
	return x
}

// phraseIndexes caches the index of each phrase list Classify is given, keyed by a
// hash of the list and checked against it, so a list is normalised once, not on every
// call. Lists come from the policy and are few; past maxPhraseIndexes lists (a bound
// that concurrent first calls may overshoot slightly) a new list is indexed on every
// call instead.
var (
	phraseIndexes    sync.Map // uint64 -> *phraseIndex
	phraseIndexCount atomic.Int64
	phraseIndexSeed  = maphash.MakeSeed()
)

const maxPhraseIndexes = 256

// indexPhrases returns the index of a phrase list, from phraseIndexes when it is there.
// Safe for concurrent use.
func indexPhrases(phrases []string) *phraseIndex {
	var h maphash.Hash
	h.SetSeed(phraseIndexSeed)
	for _, p := range phrases {
		h.WriteString(p)
		h.WriteByte(0)
	}
	key := h.Sum64()
	if v, ok := phraseIndexes.Load(key); ok {
		if x := v.(*phraseIndex); slices.Equal(x.phrases, phrases) {
			return x
		}
		return newPhraseIndex(phrases) // another list with the same hash
	}
	x := newPhraseIndex(phrases)
	if phraseIndexCount.Load() < maxPhraseIndexes {
		if _, loaded := phraseIndexes.LoadOrStore(key, x); !loaded {
			phraseIndexCount.Add(1)
		}
	}
	return x
}

var questionWords = map[string]bool{
	"what": true, "whats": true, "where": true, "when": true, "why": true, "how": true, "who": true, "which": true,
	"is": true, "are": true, "can": true, "could": true, "do": true, "does": true, "will": true,
	"qué": true, "dónde": true, "cuándo": true, "quoi": true, "où": true, "quand": true, "was": true, "wo": true, "wann": true,
}

// Classify reads an utterance's intent under a language's phrases and returns it with
// the phrase that decided (empty for other and unknown).
//
// The rules, in order: no words is unknown; the later of the last stop phrase (or
// bare clause ending its sentence: "No.") and the last amend marker (in an utterance
// with words besides it) or correction ("not Friday, Saturday": a Correct marker
// beginning a clause that a comma follows, then more words; "No, Saturday": a bare
// clause that a comma and more words follow) decides, so "cancel that and book 4pm instead" amends and "make it
// 4pm... no, stop" stops; a stop or soft stop phrase that begins inside a NotStop
// phrase ("don't stop", "don't forget") is none; a soft stop ("wait") stops unless an
// amendment is present (a bare word's correction followed by a soft stop, "No,
// wait.", stops); a weak amend marker ("actually") amends only a short statement
// that is not a question; anything else is other.
//
// Classify is pure and safe for concurrent use. It takes time linear in len(text);
// each phrase list is normalised once and kept (by content, for up to 256 lists), so
// the phrases add a constant per call. Phrases are read by value: changing a list
// after a call is seen by the next call.
func Classify(text string, p Phrases) (Intent, string) {
	text = Normalize(text)
	words := Words(text)
	if len(words) == 0 {
		return IntentUnknown, ""
	}
	notStop := notStopWords(text, words, indexPhrases(p.NotStop))
	stopAt, stop := lastOutside(words, indexPhrases(p.Stop), notStop)
	amendAt, amend, amendLen := lastIndex(words, indexPhrases(p.Amend))
	if amendAt >= 0 && amendLen >= len(words) {
		amendAt = -1 // a marker alone ("make it") carries no new details
	}
	if at, marker := correctionAt(text, words, indexPhrases(p.Correct)); at > amendAt {
		amendAt, amend = at, marker
	}
	bareStopAt, bareAmendAt, bareStop, bareAmend := bareClauses(text, words, indexPhrases(p.Bare))
	if bareStopAt > stopAt {
		stopAt, stop = bareStopAt, bareStop
	}
	if bareAmendAt > amendAt {
		amendAt, amend = bareAmendAt, bareAmend
	}
	question := strings.ContainsAny(text, "?") || questionWords[words[0]]
	if amendAt < 0 && len(p.WeakAmend) > 0 && !question {
		if at, weak, n := lastIndex(words, indexPhrases(p.WeakAmend)); at >= 0 && at+n < len(words) && len(words)-n <= 4 {
			amendAt, amend = at, weak
		}
	}
	softAt, soft := lastOutside(words, indexPhrases(p.Soft), notStop)
	switch {
	case stopAt >= 0 && stopAt >= amendAt: // a tie ("mejor no") stops: fail closed
		return IntentStop, stop
	case amendAt >= 0 && amendAt == bareAmendAt && softAt > amendAt:
		return IntentStop, soft // "No, wait.": a bare word's correction is a soft stop
	case amendAt >= 0:
		return IntentAmend, amend
	case soft != "":
		return IntentStop, soft
	}
	return IntentOther, ""
}

// lastOutside is lastIndex for the phrases of x that do not begin at a word that
// skip marks (nil: none): the word index of the last one and the phrase as given;
// -1 and "" when none occurs.
func lastOutside(words []string, x *phraseIndex, skip []bool) (int, string) {
	for i := len(words) - 1; i >= 0; i-- {
		if skip != nil && skip[i] {
			continue
		}
		for _, p := range x.byFirst[words[i]] {
			if hasPrefix(words[i:], p.words) {
				return i, p.text
			}
		}
	}
	return -1, ""
}

// notStopWords marks the words of text (words = Words(text), text normalised) that
// lie inside an occurrence of a NotStop phrase of x whose words no punctuation
// separates ("don't stop" in "Don't stop, book it.", not in "Don't! Stop!"); nil when
// none does.
func notStopWords(text string, words []string, x *phraseIndex) []bool {
	if !anyFirst(words, x) {
		return nil
	}
	breaks := wordBreaks(text, len(words))
	var marks []bool
	for i := range words {
		for _, p := range x.byFirst[words[i]] {
			if hasPrefix(words[i:], p.words) && !slices.ContainsFunc(breaks[i+1:i+len(p.words)], func(b byte) bool { return b != 0 }) {
				if marks == nil {
					marks = make([]bool, len(words))
				}
				for k := range p.words {
					marks[i+k] = true
				}
				break
			}
		}
	}
	return marks
}

// correctionAt returns the word index and the marker of the last correction in text
// (normalised; words = Words(text)): a clause — the start of a sentence, or after a
// comma — that begins with a marker of x and has words after it, followed in the same
// sentence by a comma and more words ("Not Friday, Saturday", "No, not that one, the
// 5pm"); -1 and "" when there is none.
func correctionAt(text string, words []string, x *phraseIndex) (int, string) {
	if !anyFirst(words, x) {
		return -1, ""
	}
	breaks := wordBreaks(text, len(words))
	for i := len(words) - 1; i >= 0; i-- {
		if i > 0 && breaks[i] != ',' && breaks[i] != '.' {
			continue // not the start of a clause
		}
		for _, p := range x.byFirst[words[i]] {
			n := len(p.words)
			if !hasPrefix(words[i:], p.words) || i+n >= len(words) || breaks[i+n] == ',' || breaks[i+n] == '.' {
				continue // not the marker, or no words after it in its clause
			}
			for j := i + n + 1; j < len(words) && breaks[j] != '.'; j++ {
				if breaks[j] == ',' {
					return i, p.text
				}
			}
		}
	}
	return -1, ""
}

// bareClauses returns the word index and the phrase of the last clause of bare words
// of x that ends its sentence (a stop: "No.") and of the last one that a comma and more
// words of its sentence follow (a correction: "No, Saturday."), in text (normalised;
// words = Words(text)); -1 and "" for none. A clause is a run of words that begins the
// text, a sentence or follows a comma, and ends at a comma, a sentence end or the end
// of the text; it is a bare clause when bare phrases make up all its words. The index
// returned is that of the clause's last phrase.
func bareClauses(text string, words []string, x *phraseIndex) (stopAt, amendAt int, stop, amend string) {
	stopAt, amendAt = -1, -1
	if !anyFirst(words, x) {
		return
	}
	breaks := wordBreaks(text, len(words))
	for i := 0; i < len(words); {
		// words[i] starts a clause; find its end and whether bare phrases fill it.
		j, last, lastText, bare := i, -1, "", true
		for j < len(words) && (j == i || (breaks[j] != ',' && breaks[j] != '.')) {
			if !bare {
				j++
				continue
			}
			matched := false
			for _, p := range x.byFirst[words[j]] {
				n := len(p.words)
				if hasPrefix(words[j:], p.words) && !slices.ContainsFunc(breaks[j+1:j+n], func(b byte) bool { return b == ',' || b == '.' }) {
					last, lastText, matched = j, p.text, true
					j += n
					break
				}
			}
			if !matched {
				bare = false
				j++
			}
		}
		if bare && last >= 0 {
			if j == len(words) || breaks[j] == '.' {
				stopAt, stop = last, lastText
			} else {
				amendAt, amend = last, lastText
			}
		}
		i = j
	}
	return
}

// anyFirst reports whether a phrase of x may start at one of words.
func anyFirst(words []string, x *phraseIndex) bool {
	if len(x.byFirst) == 0 {
		return false
	}
	return slices.ContainsFunc(words, func(w string) bool { return x.byFirst[w] != nil })
}

// wordBreaks returns, for each of the n words of text (normalised, as Words splits
// it), what separates it from the word before: 0 white space only (or nothing, for the
// first word), ',' a comma, '.' a sentence end (. ! ? ; … ¡ ¿), 'p' other
// punctuation; the strongest when there are several (. over , over p). One pass over
// text; words are runs of letters, digits and combining marks, apostrophes inside them
// dropped, as in Words.
func wordBreaks(text string, n int) []byte {
	breaks := make([]byte, n)
	scanBreaks(text, func(k int, b byte) {
		if k < n { // always: text has n words
			breaks[k] = b
		}
	})
	return breaks
}

// scanBreaks calls f with the index of each word of text, in order, and the break
// before it (wordBreaks).
func scanBreaks(text string, f func(k int, b byte)) {
	k, inWord := -1, false
	var pending byte
	for _, r := range text {
		switch {
		case isApostrophe(r):
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if !inWord {
				k++
				f(k, pending)
				pending, inWord = 0, true
			}
		default:
			inWord = false
			if b := breakKind(r); breakRank[b] > breakRank[pending] {
				pending = b
			}
		}
	}
}

// breakRank orders the kinds of breaks, weakest first.
var breakRank = [256]uint8{'p': 1, ',': 2, '.': 3}

// breakKind is the kind of break a separator rune makes: 0 white space, ',' a comma,
// '.' a sentence end, 'p' other punctuation.
func breakKind(r rune) byte {
	switch {
	case unicode.IsSpace(r):
		return 0
	case r == ',':
		return ','
	case endsSentence(r):
		return '.'
	}
	return 'p'
}

// endsSentence: the punctuation that ends a sentence.
func endsSentence(r rune) bool {
	switch r {
	case '.', '!', '?', ';', '…', '¡', '¿':
		return true
	}
	return false
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ'
}
