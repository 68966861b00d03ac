package speech

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// Vocabulary is what the claim reader knows of one tool's side effect: the verbs that
// claim it happened and the nouns that name it. Every vocabulary shares the rest of
// the reader's words: the generic verbs (made, done, confirmed, went through: done,
// when the clause is about the side effect), the cancellation verbs (cancelled,
// stopped, called off: not done), frames, negations and modals. The zero Vocabulary
// has only those. Build one with VocabularyFor; Booking is today's booking one.
//
// A Vocabulary is read by value, like Phrases: ReadClaims compiles it once and keeps
// it (by content, for up to 256 vocabularies).
type Vocabulary struct {
	// Done are the verbs, past tense or participle, of one or more words, that claim
	// the side effect happened: "sent", "delivered", "went out". A verb listed here is
	// the tool's own: it claims done wherever a past form is licensed (after an
	// auxiliary or a subject: "the message was sent", "I sent it"), with no noun
	// needed, and its base form (guessed: "send", "book", "cancel") says not done after
	// do-support or a negated ability ("I didn't send it", "I couldn't send it"). It
	// takes precedence over a generic or cancellation verb of the same words: in the
	// vocabulary of a tool that cancels an order, "cancelled" claims done (except of a
	// request: "I cancelled the request" is a cancellation, not done).
	Done []string
	// Nouns are the words that name the side effect ("booking", "order"): a clause
	// that names one is about it (so "the order went through" claims it, where "the
	// music went through" does not), and "there is a booking", "you have no order"
	// claim it done or not done.
	Nouns []string
}

// Booking is the vocabulary of bookings, ReadClaims' own: booked, reserved,
// scheduled, rebooked, "all set"; booking, reservation, appointment, slot, spot,
// table. VocabularyFor derives it for a tool whose name or describe names a booking
// ("book_slot", "the booking for {slot}").
var Booking = Vocabulary{
	Done:  []string{"booked", "reserved", "scheduled", "rebooked", "all set"},
	Nouns: []string{"booking", "bookings", "reservation", "reservations", "appointment", "appointments", "slot", "slots", "spot", "table"},
}

// effect is a built-in side effect: its vocabulary, and the words of a tool's name or
// describe template that name it (cues).
type effect struct {
	v    Vocabulary
	cues string
}

// effects are the built-in side effects VocabularyFor derives a vocabulary from: sent,
// paid, ordered, cancelled, booked, scheduled, added, submitted, and the other
// cancellation verbs of the reader (deleted, removed, stopped, ...), each claimed by
// its own verbs.
var effects = func() []effect {
	scheduled := Vocabulary{Done: []string{"scheduled", "booked", "reserved", "rebooked", "all set"}, Nouns: Booking.Nouns}
	out := []effect{
		{Booking, "book books booking bookings booked reserve reserves reservation reservations reserved rebook rebooking rebooked"},
		{scheduled, "schedule schedules scheduling scheduled appointment appointments"},
		{Vocabulary{Done: []string{"sent", "delivered"}, Nouns: []string{"message", "messages", "sms", "text", "texts", "email", "emails"}}, "send sends sending sent"},
		{Vocabulary{Done: []string{"paid"}, Nouns: []string{"payment", "payments"}}, "pay pays paying payment payments paid"},
		{Vocabulary{Done: []string{"ordered"}, Nouns: []string{"order", "orders"}}, "order orders ordering ordered"},
		{Vocabulary{Done: []string{"cancelled", "canceled", "called off"}, Nouns: []string{"cancellation", "cancellations", "cancelation"}}, "cancel cancels cancelling canceling cancellation cancellations cancelation cancelled canceled"},
		{Vocabulary{Done: []string{"added"}}, "add adds adding added"},
		{Vocabulary{Done: []string{"submitted"}, Nouns: []string{"submission", "submissions"}}, "submit submits submitting submission submissions submitted"},
	}
	// The other cancellation verbs claim a tool's side effect when the tool does it
	// ("delete_account": deleted).
	for _, base := range cancelBase {
		if done, ok := pastsOf[base]; ok {
			out = append(out, effect{Vocabulary{Done: done}, base + " " + base + "s " + strings.Join(done, " ")})
		}
	}
	return out
}()

// pastsOf are the past forms of each cancellation verb of one word but cancel, by its
// base form.
var pastsOf = map[string][]string{
	"stop": {"stopped"}, "release": {"released"}, "withdraw": {"withdrawn", "withdrew"}, "abort": {"aborted"},
	"halt": {"halted"}, "void": {"voided"}, "remove": {"removed"}, "delete": {"deleted"}, "undo": {"undone", "undid"},
	"revert": {"reverted"}, "reverse": {"reversed"},
}

// VocabularyFor returns the vocabulary of a tool. claims, when not nil, are its Done
// verbs as given (a spelling variant of a cancellation verb is added: "canceled" for
// "cancelled"), with the nouns of the built-in side effects that claim one of them
// ("sent": message, sms, text, email). When claims is nil the vocabulary is derived:
// the first of the tool name's first word, the words of describe (its {arg}
// placeholders left out) and the name's other words that names a built-in side
// effect gives that side effect's vocabulary ("send_sms": sent, delivered;
// "book_slot": Booking; "cancel_order": cancelled; "delete_account": deleted); none
// gives the zero Vocabulary (generic and cancellation verbs only). A name is split
// into words at "_", "-", ".", ":", digits and lower-to-upper case changes. Pure; the
// caller owns the result.
func VocabularyFor(claims []string, name, describe string) Vocabulary {
	if claims != nil {
		v := Vocabulary{Done: slices.Clone(claims)}
		norm := make([]string, len(claims))
		for i, c := range claims {
			norm[i] = strings.Join(strings.Fields(strings.ToLower(c)), " ")
			if alt, ok := spellings[norm[i]]; ok && !slices.Contains(claims, alt) && !slices.Contains(v.Done, alt) {
				v.Done = append(v.Done, alt)
			}
		}
		for _, e := range effects {
			if slices.ContainsFunc(norm, func(c string) bool { return slices.Contains(e.v.Done, c) }) {
				for _, n := range e.v.Nouns {
					if !slices.Contains(v.Nouns, n) {
						v.Nouns = append(v.Nouns, n)
					}
				}
			}
		}
		return v
	}
	nameWords := splitName(name)
	var cues []string
	if len(nameWords) > 0 {
		cues = append(cues, nameWords[0])
	}
	cues = append(cues, Words(dropPlaceholders(describe))...)
	if len(nameWords) > 1 {
		cues = append(cues, nameWords[1:]...)
	}
	for _, w := range cues {
		for _, e := range effects {
			if slices.Contains(strings.Fields(e.cues), w) {
				return Vocabulary{Done: slices.Clone(e.v.Done), Nouns: slices.Clone(e.v.Nouns)}
			}
		}
	}
	return Vocabulary{}
}

// spellings pairs the spellings of a cancellation verb.
var spellings = map[string]string{"cancelled": "canceled", "canceled": "cancelled"}

// splitName splits a tool name into lower-case words.
func splitName(name string) []string {
	var out []string
	var b strings.Builder
	var prev rune
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	flush()
	return out
}

// dropPlaceholders removes the {arg} placeholders of a describe template.
func dropPlaceholders(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
			b.WriteByte(' ')
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckClaimVerb reports whether verb can be a Done verb of a Vocabulary: nil, or an
// error saying why not: it has no words, or it is one word that the reader reads as
// something else (a subject, an auxiliary, a negation, a modal, a determiner: "is",
// "not", "the"), which would make every clause with it a claim.
func CheckClaimVerb(verb string) error {
	ws := strings.Fields(strings.ToLower(verb))
	switch {
	case len(ws) == 0:
		return fmt.Errorf("has no words")
	case len(ws) == 1 && functionWord(ws[0]):
		return fmt.Errorf("is a word the claim reader reads as something else (a subject, an auxiliary, a negation, a modal or a determiner), not a verb")
	}
	return nil
}

// functionWord reports whether w is a word the reader gives a role of its own (step 7
// to 9), so it must not be a claim verb.
func functionWord(w string) bool {
	return len(w) < 2 || baseKinds[w] != 0 || auxiliaries[w] || determiners[w] || doSupport[w] ||
		conjunctions[w] || whWords[w] || inverted[w] || beForms[w] || haveForms[w] || relPronouns[w]
}

// baseForms guesses the base forms of a past form of one or more words ("sent":
// "send"; "booked": "book"; "scheduled": "schedule"; "called off": "call off"). For a
// regular verb it returns every candidate (booked: book, booke; submitted: submitt,
// submitte, submit): a guess that is no English word never matches. Candidates the
// reader reads as something else are dropped.
func baseForms(past string) []string {
	ws := strings.Fields(past)
	if len(ws) == 0 {
		return nil
	}
	w, rest := ws[0], strings.Join(ws[1:], " ")
	var cands []string
	if b, ok := irregular[w]; ok {
		cands = append(cands, b)
	} else if stem, ok := strings.CutSuffix(w, "ied"); ok {
		cands = append(cands, stem+"y")
	} else if stem, ok := strings.CutSuffix(w, "ed"); ok {
		cands = append(cands, stem, stem+"e")
		if n := len(stem); n >= 2 && stem[n-1] == stem[n-2] {
			cands = append(cands, stem[:n-1]) // submitted, cancelled
		}
	}
	var out []string
	for _, c := range cands {
		if functionWord(c) {
			continue
		}
		if rest != "" {
			c += " " + rest
		}
		out = append(out, c)
	}
	return out
}

// irregular are the base forms of irregular past forms.
var irregular = map[string]string{
	"sent": "send", "paid": "pay", "made": "make", "done": "do", "bought": "buy", "built": "build",
	"went": "go", "gone": "go", "put": "put", "set": "set", "taken": "take", "took": "take",
	"got": "get", "gotten": "get", "written": "write", "wrote": "write", "given": "give", "gave": "give",
	"left": "leave", "spent": "spend", "sold": "sell", "told": "tell", "kept": "keep", "held": "hold",
	"withdrawn": "withdraw", "withdrew": "withdraw", "undone": "undo", "undid": "undo", "laid": "lay",
	"brought": "bring", "sent out": "send out", "run": "run", "ran": "run", "shut": "shut",
}

// lexicon is a Vocabulary compiled for the reader: every claim verb, and the word sets
// that depend on the vocabulary's nouns and verbs. Built once per vocabulary; only
// read afterwards.
type lexicon struct {
	verbs   map[string]verb         // the claim verbs of one word
	phrases map[string][]phraseVerb // those of more than one word, by first word
	kinds   map[string]wordKind     // the word kinds index.reset asks (wordKinds for Booking)
	nouns   wordSet                 // Vocabulary.Nouns (bookNouns for Booking)
	topic   wordSet                 // a clause naming one is about the side effect (topicWords)
	objs    wordSet                 // a cancellation verb's objects that are the side effect (cancelObjs)
	rel     wordSet                 // verbs of a relative clause after a noun (relVerbs and the own verbs)
	undoes  bool                    // an own verb is a cancellation verb: "your cancellation was processed" is done
}

// compile builds the lexicon of v.
func compile(v Vocabulary) *lexicon {
	lx := &lexicon{verbs: map[string]verb{}, phrases: map[string][]phraseVerb{}}
	add := func(words string, class verbClass, form verbForm, undo bool) {
		ws := strings.Fields(strings.ToLower(words))
		if len(ws) == 0 {
			return
		}
		vb := verb{class: class, form: form, width: len(ws), undo: undo}
		if len(ws) == 1 {
			lx.verbs[ws[0]] = vb
			return
		}
		list := lx.phrases[ws[0]]
		for i, p := range list {
			if slices.Equal(p.words, ws) {
				list[i].v = vb
				return
			}
		}
		lx.phrases[ws[0]] = append(list, phraseVerb{ws, vb})
	}
	for _, l := range []struct {
		words []string
		class verbClass
		form  verbForm
	}{{genericPast, classGeneric, formPast}, {genericBase, classGeneric, formBase},
		{cancelPast, classCancel, formPast}, {cancelBase, classCancel, formBase}} {
		for _, w := range l.words {
			add(w, l.class, l.form, false)
		}
	}
	for _, d := range v.Done {
		if CheckClaimVerb(d) != nil {
			continue
		}
		d = strings.Join(strings.Fields(strings.ToLower(d)), " ")
		undo := slices.Contains(cancelPast, d)
		lx.undoes = lx.undoes || undo
		for _, b := range baseForms(d) {
			if _, past := lx.verbs[b]; !past || lx.verbs[b].form != formPast {
				add(b, classOwn, formBase, undo)
			}
		}
	}
	for _, d := range v.Done {
		if CheckClaimVerb(d) == nil {
			add(d, classOwn, formPast, slices.Contains(cancelPast, strings.Join(strings.Fields(strings.ToLower(d)), " ")))
		}
	}

	lx.nouns = wordSet{}
	for _, n := range v.Nouns {
		for _, w := range strings.Fields(strings.ToLower(n)) {
			lx.nouns[w] = true
		}
	}
	lx.topic, lx.objs, lx.rel = union(lx.nouns, topicPronouns), union(lx.nouns, cancelObjWords), union(relVerbs)
	lx.kinds = make(map[string]wordKind, len(baseKinds)+len(lx.nouns)+len(lx.verbs))
	for w, k := range baseKinds {
		lx.kinds[w] = k
	}
	for w := range lx.nouns {
		lx.kinds[w] |= kindEndsGroup
	}
	for w, vb := range lx.verbs {
		if vb.form == formPast {
			lx.kinds[w] |= kindEndsGroup
			if vb.class == classOwn {
				lx.rel[w] = true
			}
		}
	}
	return lx
}

func union(sets ...wordSet) wordSet {
	out := wordSet{}
	for _, s := range sets {
		for w := range s {
			out[w] = true
		}
	}
	return out
}

// verbAt returns the claim verb that starts at words[i], if any; a verb of more than
// one word wins over its first word ("go through" over "go").
func (lx *lexicon) verbAt(words []string, i int) (verb, bool) {
	for _, p := range lx.phrases[words[i]] {
		if hasPrefix(words[i:], p.words) {
			return p.v, true
		}
	}
	v, ok := lx.verbs[words[i]]
	return v, ok
}

// bookingLexicon is Booking compiled, which ReadClaims reads with.
var bookingLexicon = compile(Booking)

// lexicons caches the lexicon of each Vocabulary read, keyed by a hash of its content
// and checked against it (as phraseIndexes does for Classify). Vocabularies come from
// the policy and are few; past maxLexicons, a new one is compiled on every call.
var (
	lexicons     sync.Map // uint64 -> *cachedLexicon
	lexiconCount atomic.Int64
	lexiconSeed  = maphash.MakeSeed()
)

const maxLexicons = 256

type cachedLexicon struct {
	v  Vocabulary // a copy
	lx *lexicon
}

// lexiconOf returns the lexicon of v, from lexicons when it is there. Safe for
// concurrent use.
func lexiconOf(v Vocabulary) *lexicon {
	var h maphash.Hash
	h.SetSeed(lexiconSeed)
	for _, l := range [][]string{v.Done, v.Nouns} {
		for _, s := range l {
			h.WriteString(s)
			h.WriteByte(0)
		}
		h.WriteByte(1)
	}
	key := h.Sum64()
	if c, ok := lexicons.Load(key); ok {
		if c := c.(*cachedLexicon); slices.Equal(c.v.Done, v.Done) && slices.Equal(c.v.Nouns, v.Nouns) {
			return c.lx
		}
		return compile(v) // another vocabulary with the same hash
	}
	lx := compile(v)
	if lexiconCount.Load() < maxLexicons {
		c := &cachedLexicon{Vocabulary{Done: slices.Clone(v.Done), Nouns: slices.Clone(v.Nouns)}, lx}
		if _, loaded := lexicons.LoadOrStore(key, c); !loaded {
			lexiconCount.Add(1)
		}
	}
	return lx
}
