package speech

import "strings"

// The claim reader's vocabulary: word classes, phrases and claim verbs. Everything here
// is built once at package initialisation and only read afterwards.

// wordSet is a set of normalised words.
type wordSet map[string]bool

func set(s string) wordSet {
	m := wordSet{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// hasAny reports whether one of ws is in the set.
func (m wordSet) hasAny(ws []string) bool {
	for _, w := range ws {
		if m[w] {
			return true
		}
	}
	return false
}

// phraseList is a list of phrases of one or more words, indexed by first word. match
// returns the first phrase in list order that starts at a position, so a longer phrase
// listed before a shorter one with the same start ("i am so sorry", "i am sorry") wins.
type phraseList map[string][][]string

func phrases(ss ...string) phraseList {
	l := phraseList{}
	for _, s := range ss {
		ws := strings.Fields(s)
		l[ws[0]] = append(l[ws[0]], ws)
	}
	return l
}

// match returns the length in words of the first phrase that words[i:] starts with, 0
// for none. It costs a map look-up and the phrases that share words[i].
func (l phraseList) match(words []string, i int) int {
	if i >= len(words) {
		return 0
	}
	for _, p := range l[words[i]] {
		if hasPrefix(words[i:], p) {
			return len(p)
		}
	}
	return 0
}

func hasPrefix(words, p []string) bool {
	if len(p) > len(words) {
		return false
	}
	for i := range p {
		if words[i] != p[i] {
			return false
		}
	}
	return true
}

var (
	// frames are discourse frames dropped at the start of a clause (step 3).
	frames = phrases(
		"i am so sorry", "i am sorry", "i am afraid", "i apologize", "i apologise",
		"my apologies", "apologies", "sorry about that", "sorry",
		"just to confirm", "to confirm", "i can confirm", "i can tell you",
		"i can let you know", "i want to let you know", "i wanted to let you know",
		"just so you know", "just to let you know", "let me tell you", "please note",
		"it looks like", "it seems like", "it seems", "it appears", "it turns out",
		"as it turns out", "i see", "i think", "i believe", "as you can see",
		"do not worry", "no problem", "no worries", "not a problem", "good news",
		"of course", "that is right", "to be clear", "in fact", "i checked",
		"i have checked", "yes", "yeah", "yep", "okay", "ok", "alright", "all right",
		"right", "well", "so", "and", "but", "oh", "ah", "um", "uh", "hmm",
		"actually", "unfortunately", "fortunately", "however", "also", "then", "now",
		"great", "perfect", "sure", "certainly", "absolutely", "understood",
		"luckily", "thankfully", "good", "anyway",
	)
	// negFrames are frames that negate what follows ("I don't think it was booked").
	negFrames = phrases("i do not think", "i do not believe")
	// subordinators open a subordinate clause: it makes no claim (step 4), and it is
	// cut off the end of a main clause (step 5).
	subordinators = phrases(
		"before", "after", "until", "till", "once", "when", "whenever", "while", "if",
		"unless", "whether", "since", "than", "as soon as", "by the time", "so that",
		"in case", "in order to",
	)
	// conjunctions separate clauses and are dropped (step 2).
	conjunctions = set("but and so because however although though whereas")

	// Questions (step 4): an inverted auxiliary before a subject, or a wh-word.
	inverted     = set("would should shall can could will do does did is are was were have has had may might am")
	invertedSubj = set("i you we it that this there the your my he she they anything everything")
	whWords      = set("what which who whom whose why how where")

	auxiliaries = set("am is are was were be been has have had got get gets")
	skipAdverbs = set("already just now longer also successfully actually still all really indeed definitely officially fully finally properly correctly yet both then originally even ever truly")
	negators    = set("not never no nothing none neither nor nobody unable failed")
	subjects    = set("i we you they he she it that this these those nothing everything something anything all one which who what")
	objPronouns = set("me him her us them")
	// bookNouns are the nouns of the Booking vocabulary; topicWords and cancelObjs are
	// Booking's topic and cancellation objects (lexicon.topic, lexicon.objs): its nouns
	// and topicPronouns, its nouns and cancelObjWords.
	bookNouns      = set("booking bookings reservation reservations appointment appointments slot slots spot table")
	topicWords     = set("booking bookings reservation reservations appointment appointments slot slots spot table it that this everything all nothing cancellation cancelation")
	cancelObjs     = set("booking bookings reservation reservations appointment appointments slot slots spot table request requests process job order operation call action it that this everything all")
	topicPronouns  = set("it that this everything all nothing cancellation cancelation")
	cancelObjWords = set("request requests process job order operation call action it that this everything all")
	// requestNouns are the objects of an own cancellation verb that make it withdraw a
	// request rather than claim the side effect ("I cancelled the request").
	requestNouns = set("request requests cancellation cancelation process operation action")
	otherNouns   = set("request requests process job order operation action cancellation cancelation")
	cancelNouns  = set("cancellation cancelation")
	determiners  = set("a an the some another any")
	modals       = set("will would shall should may might must can could going let want wants wanted need needs needed hope hoping plan planning try trying tried ask asked request requested prefer like likes")
	abilityWords = set("can could")
	successWords = set("able managed manage")
	failureWords = set("unable failed fail")
	doSupport    = set("do does did")

	// Possession (step 7): "there is a booking", "you have no booking".
	beForms   = set("is are was were")
	haveForms = set("have has had got")
	// possessionMods may stand, with determiners and negators, between "there is" or
	// "have" and the booking noun ("you have no current booking").
	possessionMods = set("your one single current active")
	// subjectMods may stand, with determiners, between a negator and the subject it
	// negates ("none of your bookings", "no single booking").
	subjectMods = set("single your of")

	// Relative clauses after a booking noun (step 6).
	relPronouns = set("that which")
	relSubjects = set("i you we")
	relAdverbs  = set("had have has just already originally")
	relVerbs    = set("asked requested wanted mentioned chose picked selected needed made booked described discussed gave had reserved scheduled")
	relTails    = set("for about earlier")
)

// verbClass is what a claim verb says about the side effect.
type verbClass byte

const (
	classOwn     verbClass = 'o' // the vocabulary's own verbs (Vocabulary.Done: booked, reserved, all set; sent): done
	classGeneric verbClass = 'g' // made, done, confirmed, went through: done, about the side effect only
	classCancel  verbClass = 'c' // cancelled, stopped, called off: not done
)

// verbForm is the form of a claim verb, which decides where it is licensed (step 7).
type verbForm byte

const (
	formPast verbForm = 'p' // past tense or participle: "booked", "went through"
	formBase verbForm = 'b' // base form: "book", "go through"
	formHave verbForm = 'x' // possession: "there is a booking", "you have a booking"
)

// verb is a claim verb: its class, form and width in words. undo marks an own verb
// that is also a cancellation verb ("cancelled" in the vocabulary of a tool that
// cancels an order): it claims the tool's side effect, except of a request
// ("I cancelled the request" withdraws it; objectClass).
type verb struct {
	class verbClass
	form  verbForm
	width int
	undo  bool
}

// phraseVerb is a claim verb of more than one word.
type phraseVerb struct {
	words []string
	v     verb
}

// The claim verbs of every vocabulary, past forms and base forms, each of one or more
// words. A vocabulary's own verbs (Vocabulary.Done) take precedence over them.
var (
	genericPast = []string{"made", "done", "completed", "complete", "confirmed", "finalized", "finalised",
		"secured", "placed", "processed", "committed", "exists", "exist", "went through", "gone through",
		"set up", "locked in", "put through", "taken care of", "went ahead with", "gone ahead with"}
	genericBase = []string{"make", "do", "confirm", "finalize", "finalise", "secure", "place", "process",
		"commit", "go through", "go ahead with"}
	cancelPast = []string{"cancelled", "canceled", "stopped", "released", "withdrawn", "withdrew", "aborted",
		"halted", "voided", "removed", "deleted", "undone", "undid", "reverted", "reversed", "called off"}
	cancelBase = []string{"cancel", "stop", "release", "withdraw", "abort", "halt", "void", "remove",
		"delete", "undo", "revert", "reverse", "call off"}
)

// verbs are the claim verbs of one word of the Booking vocabulary; phraseVerbs those of
// more than one word, by first word.
var verbs, phraseVerbs = bookingLexicon.verbs, bookingLexicon.phrases
