package speech

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
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
	// IntentOther: anything else (a follow-up question, thanks): releases the hold.
	IntentOther Intent = "other"
	// IntentUnknown: nothing to read (no words): treated like other for holds.
	IntentUnknown Intent = "unknown"
)

// Phrases are one language's intent phrases. Matching is on whole words, after Unicode
// NFC normalisation and case folding, with apostrophes dropped ("don’t" = "dont").
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
}

// DefaultLanguage is the language of a session that does not say.
const DefaultLanguage = "en"

// DefaultPhrases are the built-in phrase sets by language (BCP 47 primary subtag).
// Policy.Languages replaces a language's set; Policy.StopPhrases replaces English
// stop phrases.
var DefaultPhrases = map[string]Phrases{
	"en": {
		Stop:      []string{"stop", "cancel", "don't", "do not", "never mind", "nevermind", "forget it", "scratch that", "abort"},
		Soft:      []string{"wait", "hold on", "hang on"},
		Amend:     []string{"make it", "change it to", "change that to", "change it", "instead", "switch to", "switch it to", "move it to", "no the", "how about", "let's do", "lets do", "can we do", "go with"},
		WeakAmend: []string{"actually", "rather"},
	},
	"es": {
		Stop:      []string{"mejor no", "para ya", "páralo", "detente", "alto", "cancela", "cancélalo", "cancelalo", "no lo hagas", "no reserves", "olvídalo", "olvidalo", "déjalo", "dejalo"},
		Soft:      []string{"espera", "un momento"},
		Amend:     []string{"mejor", "cámbialo a", "cambialo a", "cambia a", "en vez de", "en lugar de", "hazlo a las", "no el", "no la"},
		WeakAmend: []string{"en realidad"},
	},
	"fr": {
		Stop:      []string{"arrête", "arrêtez", "stop", "annule", "annulez", "laisse tomber", "ne le fais pas", "ne réserve pas", "oublie"},
		Soft:      []string{"attends", "attendez", "une seconde"},
		Amend:     []string{"plutôt", "change pour", "mets", "mettez", "à la place", "non le", "non la"},
		WeakAmend: []string{"en fait", "finalement"},
	},
	"de": {
		Stop:      []string{"stopp", "stop", "halt", "hör auf", "abbrechen", "brich ab", "storniere", "lass es", "vergiss es", "nicht buchen"},
		Soft:      []string{"warte", "moment"},
		Amend:     []string{"lieber", "stattdessen", "mach es", "ändere es auf", "nein den", "nein die", "nein das"},
		WeakAmend: []string{"eigentlich"},
	},
}

var folder = cases.Fold()

// Words normalises text for intent matching: Unicode NFC, case folding, apostrophes
// dropped, split into words of letters and digits. Safe for concurrent use.
func Words(text string) []string {
	s := norm.NFC.String(text)
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

// lastIndex returns the word index of the last occurrence of any phrase in words, the
// phrase, and its length in words; -1 when none occurs.
func lastIndex(words []string, phrases []string) (int, string, int) {
	best, which, n := -1, "", 0
	for _, p := range phrases {
		pw := Words(p)
		if len(pw) == 0 {
			continue
		}
	scan:
		for i := len(words) - len(pw); i >= 0; i-- {
			for j := range pw {
				if words[i+j] != pw[j] {
					continue scan
				}
			}
			if i > best || (i == best && len(pw) > n) {
				best, which, n = i, p, len(pw)
			}
			break
		}
	}
	return best, which, n
}

var questionWords = map[string]bool{
	"what": true, "whats": true, "where": true, "when": true, "why": true, "how": true, "who": true, "which": true,
	"is": true, "are": true, "can": true, "could": true, "do": true, "does": true, "will": true,
	"qué": true, "dónde": true, "cuándo": true, "quoi": true, "où": true, "quand": true, "was": true, "wo": true, "wann": true,
}

// Classify reads an utterance's intent under a language's phrases and returns it with
// the phrase that decided (empty for other and unknown).
//
// The rules, in order: no words is unknown; the later of the last stop phrase and the
// last amend marker (in an utterance with words besides it) decides, so "cancel that and
// book 4pm instead" amends and "make it 4pm... no, stop" stops; a soft stop ("wait")
// stops unless an amendment is present; a weak amend marker ("actually") amends only
// a short statement that is not a question; anything else is other.
func Classify(text string, p Phrases) (Intent, string) {
	words := Words(text)
	if len(words) == 0 {
		return IntentUnknown, ""
	}
	stopAt, stop, _ := lastIndex(words, p.Stop)
	amendAt, amend, amendLen := lastIndex(words, p.Amend)
	if amendAt >= 0 && amendLen >= len(words) {
		amendAt = -1 // a marker alone ("make it") carries no new details
	}
	question := strings.Contains(text, "?") || questionWords[words[0]]
	if amendAt < 0 && len(p.WeakAmend) > 0 && !question {
		if at, weak, n := lastIndex(words, p.WeakAmend); at >= 0 && at+n < len(words) && len(words)-n <= 4 {
			amendAt, amend = at, weak
		}
	}
	switch {
	case stopAt >= 0 && stopAt >= amendAt: // a tie ("mejor no") stops: fail closed
		return IntentStop, stop
	case amendAt >= 0:
		return IntentAmend, amend
	}
	if _, soft, _ := lastIndex(words, p.Soft); soft != "" {
		return IntentStop, soft
	}
	return IntentOther, ""
}
