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
	// IntentUnknown: nothing to read (no words, or only the model's echo): treated
	// like other for holds.
	IntentUnknown Intent = "unknown"
)

// Phrases are one language's intent phrases. Matching is on whole words, after
// Normalize (format characters dropped, Unicode NFKC) and case folding, with
// apostrophes dropped ("don’t" = "dont", "sto\u200bp" = "stop"); in a script written
// without spaces (Chinese, Japanese, Thai, ...) each letter is a word (script.go), so
// a phrase of those scripts is found inside unspaced text.
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
	// Bare stop words ("para" in Spanish) stop only as a clause of their own, a run
	// of them between the start of a sentence or a comma and a comma or a sentence
	// end: such a clause that ends its sentence stops ("¡Para!"); one that a comma and
	// more words of the same sentence follow corrects, at its place, as a Correct marker
	// does. Inside a longer clause they are nothing ("para mañana").
	Bare []string `json:",omitempty"`
	// Refuse phrases are refusals that answer whatever was asked ("no", "nope", "no
	// thanks", "not now", "I'm good"). Like Bare words they count only as a clause of
	// their own ("No problem", "no worries" are nothing). Such a clause
	//   - at the start of the utterance, with only reply words (Refuse, GoAhead,
	//     Neutral, Hedge) before it ("No.", "No, thanks.", "Nope, I'm good."), is a
	//     reply: what it refuses is the model's last question (Context.Said), and the
	//     reply is read against it (Read): a stop when it asked about the pending action
	//     ("Shall I book it?"), a go-ahead when it asked about something else
	//     ("Anything else?") or whether to cancel, unclear when nothing says (issue 25:
	//     a bare "No." that answered "anything else?" cancelled the booking; round 2
	//     had made every bare "No." a stop);
	//   - after other words of the user's, ends its sentence: a stop ("Book 4pm. No.");
	//   - followed by a comma and more words of its sentence that are neither reply
	//     words nor a question: corrects ("No, Saturday."), as a Bare clause does.
	Refuse []string `json:",omitempty"`
	// GoAhead phrases say yes ("yes", "go ahead", "sounds good"). A reply that ends on
	// one is a go-ahead (a stop when the model asked whether to cancel: "Should I
	// cancel it?" "Yes.").
	GoAhead []string `json:",omitempty"`
	// Neutral phrases ride along a reply without deciding it ("thanks", "that's all",
	// "please", "um"). A reply of only these is a go-ahead after "Anything else?",
	// unclear after a question about the pending action, other otherwise.
	Neutral []string `json:",omitempty"`
	// Hedge phrases say the user is not sure ("not sure", "maybe", "let me think about
	// it"): a reply of them, or a short statement (at most four other words, not a
	// question) with one, is unclear, except after "Anything else?" (other: it is
	// about something else).
	Hedge []string `json:",omitempty"`
	// ElseCues, ActionCues and UndoCues read the model's last question (its last
	// sentence when it asked none), which a reply answers: one that asks about
	// something else ("anything else", "algo más"), one that asks about doing the
	// pending action ("go ahead", "still want"; the verbs and nouns of the tool's
	// Vocabulary count too: "Shall I book it?"), one that asks about undoing it
	// ("cancel"). A question with cues of both else and the action is ambiguous.
	ElseCues   []string `json:",omitempty"`
	ActionCues []string `json:",omitempty"`
	UndoCues   []string `json:",omitempty"`
}

// DefaultLanguage is the language of a session that does not say.
const DefaultLanguage = "en"

// folder is shared by every call: a Caser may be stateful, but the case folder of
// golang.org/x/text/cases keeps no state (fold.go: caseFolder is a NopResetter).
var folder = cases.Fold()

// Words normalises text for intent matching: Normalize (format characters dropped,
// Unicode NFKC), case folding, apostrophes dropped, split into words of letters, digits
// and combining marks; in a script written without spaces (Chinese, Japanese, Thai,
// Lao, Khmer, Myanmar) each letter, with its marks, is a word of its own (script.go).
// It takes time linear in len(text) and is safe for concurrent use; the caller owns the
// returned slice.
func Words(text string) []string {
	if w, ok := asciiWords(text); ok {
		return w
	}
	s := Normalize(text)
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	var sc wordScanner
	for _, r := range s {
		start, in, _ := sc.next(r)
		switch {
		case start:
			b.WriteByte(' ')
			b.WriteRune(r)
		case in:
			b.WriteRune(r)
		case isApostrophe(r):
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(folder.String(b.String()))
}

// wordSpans returns the byte span [start, end) in text (normalised) of each word Words
// finds in it, in order: apostrophes inside a word are inside its span.
func wordSpans(text string) [][2]int {
	var out [][2]int
	var sc wordScanner
	for i, r := range text {
		start, in, _ := sc.next(r)
		switch {
		case start:
			out = append(out, [2]int{i, i + utf8.RuneLen(r)})
		case in:
			out[len(out)-1][1] = i + utf8.RuneLen(r)
		}
	}
	return out
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

// Classify reads an utterance's intent under a language's phrases with nothing else
// known (Read with an empty Context) and returns it with the phrase that decided
// (empty for other and unknown, and for a reply of only Neutral words). A reply's
// refusal or hedge ("No.", "I'm not sure.") is unclear: without the model's question
// nothing says what it refuses. Pure and safe for concurrent use; linear in len(text).
func Classify(text string, p Phrases) (Intent, string) {
	r := Read(text, p, Context{})
	return r.Intent, r.Phrase
}

// Reading is what Read made of an utterance.
type Reading struct {
	// Intent and the phrase that decided it (empty for other and unknown, and for a
	// reply of only Neutral words).
	Intent Intent
	Phrase string
	// Words is how many words the utterance has (Words); Echoed how many of them
	// repeat what the model said (Context.Echo) and were read as not said. Echoed ==
	// Words > 0: the whole utterance is the model's echo (Intent is unknown).
	Words, Echoed int
}

// Echo reports whether the whole utterance was the model's echo.
func (r Reading) Echo() bool { return r.Words > 0 && r.Echoed == r.Words }

// Read reads an utterance's intent under a language's phrases, in a context: what the
// model said last (which a reply answers), what of it may come back as echo, the
// pending action's words, whether the arbiter asked about it, and the words of the
// request's own arguments. The zero Context reads the words alone (Classify).
//
// The rules, in order:
//
//  1. No words is unknown.
//
//  2. Echo: words that repeat, in a run of three or more, a run of what the model said
//     (Context.Echo) are the model's own voice picked up by the microphone, not the
//     user's: they are dropped, and the rest is read (issue 25, pattern 2). An
//     utterance that is all echo is unknown (Reading.Echo). One of one or two words
//     that the model said in that order may be either: it is read, but a stop or an
//     amendment it makes is unclear.
//
//  3. The request's own words: words of the utterance that the call's arguments carry
//     (Context.Carried: a run of two or more of an argument's words, or the whole of a
//     one-word argument) are the thing requested, not intent about it ("two tickets
//     for Stop Making Sense" is no stop; pattern 4).
//
//  4. As before issue 25: the later of the last stop phrase (or Bare clause, or a
//     Refuse clause after other words of the user's, ending its sentence: "Book 4pm.
//     No.") and the last amend marker (in an utterance with words besides it) or
//     correction ("Not Friday, Saturday"; "No, Saturday.") decides, a tie stops; a stop
//     phrase that begins inside a NotStop phrase is none; a soft stop stops unless an
//     amendment is present ("No, wait." stops); a weak amend marker amends only a short
//     statement that is not a question. A correction that the utterance's opening
//     reply words make ("No, that's all.": the comma is followed by reply words) or
//     whose sentence is a question ("No, what's the weather like?") is none.
//
//  5. A reply: the clauses that open the utterance and are made only of Refuse,
//     GoAhead, Hedge and Neutral phrases. Its last refusal or go-ahead decides
//     (else a hedge, else, for an utterance of only such words, the Neutral ones),
//     read against the model's last question (the target, Context.Said; its last
//     sentence when it asked none; the arbiter's own question when Context.Asked):
//
//     reply     | the action ("Shall I book it?") | undoing it ("Should I cancel it?") | something else ("Anything else?") | none, or both
//     refusal   | stop                             | go-ahead                           | go-ahead (unclear when emphatic: "No no!", "No!") | unclear
//     go-ahead  | go-ahead                         | stop                               | go-ahead                           | go-ahead
//     hedge     | unclear                          | unclear                            | other                              | unclear
//     neutral   | unclear                          | unclear                            | go-ahead                           | other
//
//  6. A hedge in a short statement (at most four other words, not a question: "I'm
//     not sure about that") is a hedge reply.
//
//  7. Anything else is other.
//
// Read is pure and safe for concurrent use. It takes time linear in the length of the
// utterance, of Context.Said, Context.Echo and Context.Carried; each phrase list is
// normalised once and kept (by content, for up to 256 lists), so the phrases add a
// constant per call. Phrases are read by value: changing a list after a call is seen
// by the next call.
func Read(text string, p Phrases, ctx Context) Reading {
	text = Normalize(text)
	words := Words(text)
	r := Reading{Words: len(words)}
	if len(words) == 0 {
		r.Intent = IntentUnknown
		return r
	}
	maybeEcho := false
	if ctx.Echo != "" {
		rest, n, short := dropEcho(text, words, ctx.Echo, nil)
		r.Echoed, maybeEcho = n, short
		if n == len(words) {
			r.Intent = IntentUnknown
			return r
		}
		if n > 0 {
			text, words = rest, Words(rest)
		}
	}
	if len(ctx.Carried) > 0 {
		words = maskCarried(words, ctx.Carried, nil)
	}
	r.Intent, r.Phrase = classify(text, words, p, ctx)
	if maybeEcho && (r.Intent == IntentStop || r.Intent == IntentAmend) {
		r.Intent = IntentUnclear
	}
	return r
}

// classify applies rules 4 to 7 of Read to text (normalised) and its words (Words,
// the request's own words masked).
func classify(text string, words []string, p Phrases, ctx Context) (Intent, string) {
	breaks := wordBreaks(text, len(words))
	notStop := notStopWords(words, breaks, indexPhrases(p.NotStop))
	stopAt, stop := lastOutside(words, breaks, indexPhrases(p.Stop), notStop)
	amendAt, amend, amendLen := lastIndex(words, indexPhrases(p.Amend))
	h, replyFrom := readHead(words, breaks, p)
	if amendAt >= 0 && (amendLen >= len(words) || amendAt+amendLen <= h.end) {
		// a marker alone ("make it") carries no new details, and one made of the
		// opening reply's words is none ("nein das" in "Nein, das ist alles.")
		amendAt = -1
	}
	ends := sentenceEnds(words, breaks)
	noDetails := func(j int) bool { // the words at j start no new details: no correction
		return replyFrom[j] || ends[j] == '?' || questionWords[words[j]] || (notStop != nil && notStop[j])
	}
	if at, marker := correctionAt(words, breaks, noDetails, indexPhrases(p.Correct)); at > amendAt {
		amendAt, amend = at, marker
	}
	bare := bareClauses(words, breaks, replyFrom, noDetails, indexPhrases(p.Bare), indexPhrases(p.Refuse), h.end)
	if bare.stopAt > stopAt {
		stopAt, stop = bare.stopAt, bare.stop
	}
	if bare.amendAt > amendAt {
		amendAt, amend = bare.amendAt, bare.amend
	}
	question := strings.ContainsAny(text, "?") || questionWords[words[0]]
	if amendAt < 0 && len(p.WeakAmend) > 0 && !question {
		if at, weak, n := lastIndex(words, indexPhrases(p.WeakAmend)); at >= 0 && at+n < len(words) && len(words)-n <= 4 {
			amendAt, amend = at, weak
		}
	}
	softAt, soft := lastOutside(words, breaks, indexPhrases(p.Soft), notStop)
	switch {
	case stopAt >= 0 && stopAt >= amendAt: // a tie ("mejor no") stops: fail closed
		return IntentStop, stop
	case amendAt >= 0 && amendAt == bare.amendAt && softAt > amendAt:
		return IntentStop, soft // "No, wait.": a bare word's correction is a soft stop
	case amendAt >= 0:
		return IntentAmend, amend
	case soft != "":
		return IntentStop, soft
	}
	if kind, phrase := h.kind(len(words)); kind != replyNone {
		emphatic := kind == replyRefusal && h.end == len(words) && !h.neutral && !h.hedge &&
			(h.repeated || strings.Contains(text, "!"))
		return readReply(kind, phrase, emphatic, ctx, p)
	}
	if at, hedge, n := lastIndex(words, indexPhrases(p.Hedge)); at >= 0 && !question && len(words)-n <= 4 {
		return readReply(replyHedge, hedge, false, ctx, p)
	}
	return IntentOther, ""
}

// lastOutside is lastIndex for the phrases of x that do not begin at a word that
// skip marks (nil: none) and, with breaks (wordBreaks; nil: not looked at), that no
// sentence end cuts ("I do. Not yet." holds no "do not"): the word index of the last
// one and the phrase as given; -1 and "" when none occurs.
func lastOutside(words []string, breaks []byte, x *phraseIndex, skip []bool) (int, string) {
	for i := len(words) - 1; i >= 0; i-- {
		if skip != nil && skip[i] {
			continue
		}
		for _, p := range x.byFirst[words[i]] {
			if hasPrefix(words[i:], p.words) && (breaks == nil || !slices.ContainsFunc(breaks[i+1:i+len(p.words)], isEnd)) {
				return i, p.text
			}
		}
	}
	return -1, ""
}

// notStopWords marks the words (of breaks, wordBreaks) that lie inside an occurrence of
// a NotStop phrase of x whose words no punctuation separates ("don't stop" in "Don't
// stop, book it.", not in "Don't! Stop!"); nil when none does.
func notStopWords(words []string, breaks []byte, x *phraseIndex) []bool {
	if !anyFirst(words, x) {
		return nil
	}
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

// sentenceEnds returns, for each word index i, the kind of break that ends i's
// sentence ('.' or '?'; 0 when the text ends without one), from breaks (wordBreaks,
// with the break after the last word at len(words)). One pass, back to front.
func sentenceEnds(words []string, breaks []byte) []byte {
	ends := make([]byte, len(words))
	end := breaks[len(words)]
	if !isEnd(end) {
		end = 0
	}
	for i := len(words) - 1; i >= 0; i-- {
		ends[i] = end
		if isEnd(breaks[i]) {
			end = breaks[i]
		}
	}
	return ends
}

// correctionAt returns the word index and the marker of the last correction (words
// and breaks as wordBreaks gives them): a clause — the start of a sentence, or after a
// comma — that begins with a marker of x and has words after it, followed in the same
// sentence by a comma and more words ("Not Friday, Saturday", "No, not that one, the
// 5pm") that start new details (noDetails is false for the first of them: they are
// not a question, only reply words, or a NotStop phrase: "Not now, thanks" and "No,
// don't cancel it" are no corrections); -1 and "" when there is none.
func correctionAt(words []string, breaks []byte, noDetails func(int) bool, x *phraseIndex) (int, string) {
	if !anyFirst(words, x) {
		return -1, ""
	}
	for i := len(words) - 1; i >= 0; i-- {
		if i > 0 && !clauseBreak(breaks[i]) {
			continue // not the start of a clause
		}
		for _, p := range x.byFirst[words[i]] {
			n := len(p.words)
			if !hasPrefix(words[i:], p.words) || i+n >= len(words) || clauseBreak(breaks[i+n]) {
				continue // not the marker, or no words after it in its clause
			}
			for j := i + n + 1; j < len(words) && !isEnd(breaks[j]); j++ {
				if breaks[j] == ',' {
					if noDetails(j) {
						break // reply words, a question, "don't cancel": no new details
					}
					return i, p.text
				}
			}
		}
	}
	return -1, ""
}

// bareResult is what bareClauses found: the word index and the phrase of the last
// clause that stops and of the last that corrects; -1 and "" for none.
type bareResult struct {
	stopAt, amendAt int
	stop, amend     string
}

// bareClauses finds the clauses of Bare (x) and Refuse (r) phrases (words, breaks as
// wordBreaks gives them, replyFrom and headEnd, where the utterance's opening reply
// ends, as readHead).
// A clause is a run of words that begins the text, a sentence or follows a comma, and
// ends at a comma, a sentence end or the end of the text; it is such a clause when
// those phrases make up all its words. One that ends its sentence, or that only reply
// words follow in it ("No, thanks."), stops, unless it is a Refuse clause of the
// opening reply (read as a reply, readReply); one that a comma and more words of its
// sentence follow corrects, unless those words start no new details (noDetails, as in
// correctionAt). The index returned is that of the clause's last phrase.
func bareClauses(words []string, breaks []byte, replyFrom []bool, noDetails func(int) bool, x, r *phraseIndex, headEnd int) bareResult {
	res := bareResult{stopAt: -1, amendAt: -1}
	if !anyFirst(words, x) && !anyFirst(words, r) {
		return res
	}
	for i := 0; i < len(words); {
		// words[i] starts a clause; find its end and whether bare phrases fill it.
		j, last, lastText, bare, clear := i, -1, "", true, false
		for j < len(words) && (j == i || !clauseBreak(breaks[j])) {
			if !bare {
				j++
				continue
			}
			n, text, isClear := bareAt(words, breaks, j, x, r)
			if n == 0 {
				bare = false
				j++
				continue
			}
			last, lastText, clear = j, text, clear || isClear
			j += n
		}
		if bare && last >= 0 {
			switch {
			case j == len(words) || isEnd(breaks[j]) || replyFrom[j]:
				if clear || j > headEnd {
					res.stopAt, res.stop = last, lastText
				}
			case noDetails(j):
				// a question or "don't cancel" after the comma: no new details
			default:
				res.amendAt, res.amend = last, lastText
			}
		}
		i = j
	}
	return res
}

// bareAt returns the length in words and the text of the Bare (x) or Refuse (r)
// phrase at words[j] that no clause break splits, the longest (a Bare one on a tie),
// and whether it is a Bare one; 0 when none is there.
func bareAt(words []string, breaks []byte, j int, x, r *phraseIndex) (n int, text string, bare bool) {
	for k, idx := range []*phraseIndex{x, r} {
		for _, p := range idx.byFirst[words[j]] {
			m := len(p.words)
			if m > n && hasPrefix(words[j:], p.words) && !slices.ContainsFunc(breaks[j+1:j+m], clauseBreak) {
				n, text, bare = m, p.text, k == 0
			}
		}
	}
	return n, text, bare
}

// anyFirst reports whether a phrase of x may start at one of words.
func anyFirst(words []string, x *phraseIndex) bool {
	if len(x.byFirst) == 0 {
		return false
	}
	return slices.ContainsFunc(words, func(w string) bool { return x.byFirst[w] != nil })
}

// wordBreaks returns, for each of the n words of text (normalised, as Words splits
// it), what separates it from the word before, and at index n what follows the last
// word: 0 white space only (or nothing, for the first word and after the last), ',' a
// comma (or a space between two letters of a script that spaces its clauses, such as
// Thai: script.go), '.' a sentence end (. ! ; … ¡ ¿ 。), '?' a question mark, 'p'
// other punctuation; the strongest when there are several (? over . over , over p).
// One pass over text.
func wordBreaks(text string, n int) []byte {
	breaks := make([]byte, n+1)
	breaks[n] = scanBreaks(text, func(k int, b byte) {
		if k < n { // always: text has n words
			breaks[k] = b
		}
	})
	return breaks
}

// scanBreaks calls f with the index of each word of text, in order, and the break
// before it (wordBreaks), and returns the break after the last word.
func scanBreaks(text string, f func(k int, b byte)) byte {
	k := -1
	var pending byte
	var sc wordScanner
	for _, r := range text {
		start, in, clause := sc.next(r)
		switch {
		case start:
			if clause && breakRank[','] > breakRank[pending] {
				pending = ','
			}
			k++
			f(k, pending)
			pending = 0
		case in || isApostrophe(r):
		default:
			if b := breakKind(r); breakRank[b] > breakRank[pending] {
				pending = b
			}
		}
	}
	return pending
}

// breakRank orders the kinds of breaks, weakest first.
var breakRank = [256]uint8{'p': 1, ',': 2, '.': 3, '?': 4}

// clauseBreak reports whether a break ends a clause: a comma or a sentence end.
func clauseBreak(b byte) bool { return b == ',' || b == '.' || b == '?' }

// isEnd reports whether a break ends a sentence.
func isEnd(b byte) bool { return b == '.' || b == '?' }

// breakKind is the kind of break a separator rune makes: 0 white space, ',' a comma,
// '.' a sentence end, '?' a question mark, 'p' other punctuation.
func breakKind(r rune) byte {
	switch {
	case unicode.IsSpace(r):
		return 0
	case r == ',' || r == '、':
		return ','
	case r == '?':
		return '?'
	case endsSentence(r):
		return '.'
	}
	return 'p'
}

// endsSentence: the punctuation that ends a sentence (after NFKC, which makes the
// fullwidth ！ ？ ； of Chinese and Japanese text ASCII).
func endsSentence(r rune) bool {
	switch r {
	case '.', '!', '?', ';', '…', '¡', '¿', '。':
		return true
	}
	return false
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ'
}
