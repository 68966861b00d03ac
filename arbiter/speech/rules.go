package speech

// Steps 3 to 11 of the claim reader: the rules that read one clause, one function per
// rule (the list at the top of claims.go names them), in the order readClause applies
// them.

// reader reads the clauses of one statement, reusing its scratch space (the index)
// from clause to clause. It is not safe for concurrent use; ReadClaims makes one per
// call.
type reader struct {
	x index
}

// readClause reads one clause. prevTopic is whether the previous clause was about the
// booking. It returns the claim, whether there is one, and this clause's topic for the
// next clause.
func (r *reader) readClause(words []string, question, prevTopic bool) (Claim, bool, bool) {
	words, neg := dropFrames(words)
	if len(words) == 0 || startsSubordinate(words) {
		return Claim{}, false, prevTopic
	}
	topic := clauseTopic(r.x.lx, words, prevTopic)
	if question || isQuestion(words) {
		return Claim{}, false, topic
	}
	words = dropRelative(r.x.lx, cutAtSubordinator(words))
	r.x.reset(words)
	c, ok := firstClaim(&r.x, neg, topic)
	if !ok {
		c, ok = tooLate(&r.x)
	}
	if !ok {
		return Claim{}, false, topic
	}
	c.Already = saysAlready(words)
	return c, true, topic
}

// clauseTopic reports whether a clause is about the side effect (step 2): it names it
// (the vocabulary's topic: its nouns, "it", "that", "everything", ...), or it has no
// subject of its own — it starts with an auxiliary, an adverb, a negation or a claim
// verb ("and was never made") — and the previous clause was about it.
func clauseTopic(lx *lexicon, words []string, prevTopic bool) bool {
	if lx.topic.hasAny(words) {
		return true
	}
	w := words[0]
	if auxiliaries[w] || skipAdverbs[w] || negators[w] {
		return prevTopic
	}
	_, verb := lx.verbAt(words, 0)
	return prevTopic && verb
}

// dropFrames drops the discourse frames at the start of a clause (step 3: "sorry", "I
// can confirm that", ...) and the "that" after one, and returns the rest with the
// number of frames that negate it ("I don't think"). A subordinator is never a frame.
func dropFrames(words []string) ([]string, int) {
	neg := 0
	for len(words) > 0 && subordinators.match(words, 0) == 0 {
		if n := negFrames.match(words, 0); n > 0 {
			words, neg = words[n:], neg+1
		} else if n := frames.match(words, 0); n > 0 {
			words = words[n:]
		} else {
			break
		}
		if len(words) > 1 && words[0] == "that" && startsStatement(words[1]) {
			words = words[1:]
		}
	}
	return words, neg
}

// startsStatement reports whether w can start the statement a frame introduces with
// "that" ("I can confirm that the booking ...", "it looks like that nothing ...").
func startsStatement(w string) bool {
	return subjects[w] || determiners[w] || w == "no" || w == "your" || w == "there"
}

// startsSubordinate reports whether the clause is subordinate (step 4: "before it was
// committed", "if you want"): it says when or whether, not what happened.
func startsSubordinate(words []string) bool {
	return subordinators.match(words, 0) > 0
}

// isQuestion reports whether the clause is a question by its form (step 4): an inverted
// auxiliary before a subject ("would you", "is it") or a wh-word. A clause before "?"
// is a question by its punctuation (clause.question).
func isQuestion(words []string) bool {
	return whWords[words[0]] || (len(words) > 1 && inverted[words[0]] && invertedSubj[words[1]])
}

// cutAtSubordinator cuts the clause at its first subordinator after the first word
// (step 5): "it was booked before you cancelled" reads as "it was booked".
func cutAtSubordinator(words []string) []string {
	for i := 1; i < len(words); i++ {
		if subordinators.match(words, i) > 0 {
			return words[:i]
		}
	}
	return words
}

// dropRelative removes a relative clause after a noun of the vocabulary when a main
// verb (a claim verb or an auxiliary) follows it (step 6): "the booking (that) you
// asked for was cancelled" reads as "the booking was cancelled". It returns words
// itself or a new slice.
func dropRelative(lx *lexicon, words []string) []string {
	lastMain := -1 // the last claim verb or auxiliary
	for k, w := range words {
		if _, ok := lx.verbs[w]; ok || auxiliaries[w] {
			lastMain = k
		}
	}
	for i, w := range words {
		if !lx.nouns[w] {
			continue
		}
		if k, ok := relativeClause(lx, words, i+1); ok && lastMain >= k {
			return append(append([]string{}, words[:i+1]...), words[k:]...)
		}
	}
	return words
}

// relativeClause reads "(that|which) (I|you|we) [had|have|has|just|already|originally]
// <verb> [for|about|earlier]" at words[j:] and returns the index after it; <verb> is
// one of relVerbs or a past form of the vocabulary's own verbs (lexicon.rel).
func relativeClause(lx *lexicon, words []string, j int) (int, bool) {
	if j < len(words) && relPronouns[words[j]] {
		j++
	}
	if j >= len(words) || !relSubjects[words[j]] {
		return 0, false
	}
	k := j + 1
	for k < len(words) && relAdverbs[words[k]] {
		k++
	}
	if k >= len(words) || !lx.rel[words[k]] {
		return 0, false
	}
	k++
	if k < len(words) && relTails[words[k]] {
		k++
	}
	return k, true
}

// saysAlready reports whether the clause says "already" (step 11).
func saysAlready(words []string) bool {
	for _, w := range words {
		if w == "already" {
			return true
		}
	}
	return false
}

// firstClaim returns the claim of the first word of the clause that is a licensed
// claim verb (steps 7 to 9). neg counts the negating frames; topic is clauseTopic.
func firstClaim(x *index, neg int, topic bool) (Claim, bool) {
	for i := range x.words {
		if c, ok := claimAt(x, i, neg, topic); ok {
			return c, true
		}
	}
	return Claim{}, false
}

// claimAt reads the claim whose verb is at word i, if a claim verb stands there
// (verbSite), is licensed where it stands (license), and is about the booking
// (objectClass); polarity gives its kind. It takes constant time (index).
func claimAt(x *index, i, neg int, topic bool) (Claim, bool) {
	s, ok := verbSite(x, i)
	if !ok {
		return Claim{}, false
	}
	lic, ok := license(s)
	if !ok {
		return Claim{}, false
	}
	class, ok := objectClass(s, topic)
	if !ok {
		return Claim{}, false
	}
	kind, implied := polarity(class, neg+negations(s)+lic.neg)
	return Claim{Kind: kind, Implied: implied || lic.implied, Own: class == classOwn}, true
}

// site is a claim verb in its clause.
type site struct {
	x  *index
	at int   // the verb's first word
	v  verb  // the verb
	g  group // its verb group
}

// verbSite returns the claim verb at word i: a verb of the vocabulary (verbAt) or a
// possession ("there is a booking", possessionAt).
func verbSite(x *index, i int) (site, bool) {
	if v, ok := x.lx.verbAt(x.words, i); ok {
		return site{x: x, at: i, v: v, g: x.group(i)}, true
	}
	return possessionAt(x, i)
}

// possessionAt reads "there is (no) booking" or "(you) have (no) booking" at word i
// (step 7): done, as an own verb, when a noun of the vocabulary comes at most five
// words after "there" or "have" with only determiners, negators and "your", "one",
// "single", "current" or "active" between. "There" has no subject: its group is the
// whole clause before it.
func possessionAt(x *index, i int) (site, bool) {
	words := x.words
	there := words[i] == "there" && i+1 < len(words) && beForms[words[i+1]]
	if !there && !haveForms[words[i]] {
		return site{}, false
	}
	k := i + 1
	if there {
		k = i + 2
	}
	for k < len(words) && k <= i+4 && possessionMod(words[k]) {
		k++
	}
	if k >= len(words) || !x.lx.nouns[words[k]] {
		return site{}, false
	}
	s := site{x: x, at: i, v: verb{class: classOwn, form: formHave, width: 1}, g: x.group(i)}
	if there {
		s.g = group{from: 0, to: i}
	}
	return s, true
}

func possessionMod(w string) bool {
	return determiners[w] || negators[w] || possessionMods[w]
}

// licence is what licensing adds to a claim: a negation ("fail to", "too late to")
// and whether the claim is only implied ("too late to cancel").
type licence struct {
	neg     int
	implied bool
}

// license reports whether the verb is licensed where it stands (steps 7 and 8): after
// "to" see infinitive; otherwise no modal may block it (modalBlocks), a past form
// needs an auxiliary, a subject or nothing before it (licensedPast), and a base form
// do-support or a negated ability (licensedBase). A possession is licensed unless a
// modal blocks it.
func license(s site) (licence, bool) {
	if to := s.x.lastTo(s.g); to >= 0 {
		return infinitive(s, to)
	}
	if modalBlocks(s.x, s.g.from, s.g.to) {
		return licence{}, false
	}
	switch s.v.form {
	case formPast:
		return licence{}, licensedPast(s)
	case formBase:
		return licence{}, licensedBase(s)
	}
	return licence{}, true
}

// infinitive licenses a verb after the "to" at word to (step 7): only "able to" and
// "managed to" (as is), "unable to", "failed to" and "fail to" (negated) and "too late
// to" (negated, implied; "not too late to" is no claim) say whether it happened. Any
// other "X to <verb>" is an intention ("I want to book it"), and a modal before the
// "to" blocks it ("I will be able to book it").
func infinitive(s site, to int) (licence, bool) {
	words := s.x.words
	gov := s.g.subj
	if to > s.g.from {
		gov = words[to-1]
	}
	var l licence
	switch {
	case successWords[gov]:
	case failureWords[gov]:
		if gov == "fail" {
			l.neg = 1 // "unable" and "failed" are negators, counted in the group
		}
	case gov == "late" && to-2 >= s.g.from && words[to-2] == "too":
		if to-3 >= s.g.from && words[to-3] == "not" {
			return licence{}, false
		}
		l = licence{neg: 1, implied: true}
	default:
		return licence{}, false
	}
	if modalBlocks(s.x, s.g.from, to) {
		return licence{}, false
	}
	return l, true
}

// modalBlocks reports whether words[from:to] holds a modal or intention word (step 8:
// will, would, can, going, let, want, hope, try, ...) that is not a negated ability
// ("can not", "could not").
func modalBlocks(x *index, from, to int) bool {
	return x.blocks(from, to)
}

// licensedPast reports whether a past form is a claim where it stands (step 7): after
// an auxiliary ("was booked", "has been made"), a subject ("I booked") or at the start
// of a fragment ("booked that slot for you"); not after "being" (pending: "it is being
// booked") nor after a determiner or another word (an adjective: "the booked slot").
// Adverbs and negators before the verb are skipped.
func licensedPast(s site) bool {
	last := s.x.lastPlain(s.g)
	return last == "" || auxiliaries[last]
}

// licensedBase reports whether a base form is a claim where it stands (step 7): only
// after do-support ("I did not book it") or a negated ability ("I can't book it",
// "it cannot be cancelled"). "I can't confirm it" is uncertainty, not a state.
func licensedBase(s site) bool {
	ability := s.x.negatedAbility(s.g)
	if ability && s.x.words[s.at] == "confirm" {
		return false
	}
	return ability || doSupport[s.x.lastPlain(s.g)]
}

// objectClass returns the verb's class as its subject and object make it (step 7), or
// false when they make the clause no claim about the side effect. An own verb that is
// a cancellation verb too (verb.undo) withdraws a request when its object is one ("I
// cancelled the request": a cancellation).
func objectClass(s site, topic bool) (verbClass, bool) {
	obj := s.object()
	class := s.v.class
	lx := s.x.lx
	if class == classOwn && s.v.undo && objectIsRequest(obj) {
		class = classCancel
	}
	if class == classGeneric {
		if cancellationNoun(s, obj) && !lx.undoes {
			class = classCancel
		} else if !genericAboutBooking(s, obj, topic) {
			return 0, false
		}
	}
	if class == classCancel && cancelsSomethingElse(lx, obj) {
		return 0, false
	}
	if userRequest(s, class) {
		return 0, false
	}
	return class, true
}

// object returns the (at most) three words after the verb.
func (s site) object() []string {
	after := s.at + s.v.width
	return s.x.words[after:min(len(s.x.words), after+3)]
}

// cancellationNoun reports whether a generic verb's subject or object is a
// cancellation, which makes it a cancellation ("your cancellation has been
// processed": not done), unless cancelling is the side effect itself
// (lexicon.undoes: then it is done).
func cancellationNoun(s site, obj []string) bool {
	return cancelNouns[s.g.subj] || cancelNouns.hasAny(obj)
}

// genericAboutBooking reports whether a generic verb (made, done, confirmed, ...)
// claims something of the side effect: its object, if it starts with a determiner,
// names it ("I made a note" does not), and the clause is about it (topic) or is a
// fragment of at most two words ("Done.", "Completed successfully.").
func genericAboutBooking(s site, obj []string, topic bool) bool {
	if len(obj) > 0 && determiners[obj[0]] && !s.x.lx.topic.hasAny(obj[1:]) {
		return false
	}
	return topic || len(s.x.words) <= 2
}

// cancelsSomethingElse reports whether a cancellation verb's object is something other
// than the side effect or a request ("I stopped the music").
func cancelsSomethingElse(lx *lexicon, obj []string) bool {
	return len(obj) > 0 && determiners[obj[0]] && !lx.objs.hasAny(obj[1:]) && !otherNouns.hasAny(obj[1:])
}

// objectIsRequest reports whether a verb's object, after a determiner or "your", is a
// request or a cancellation ("the request", "your cancellation").
func objectIsRequest(obj []string) bool {
	if len(obj) > 0 && (determiners[obj[0]] || obj[0] == "your" || obj[0] == "my") {
		obj = obj[1:]
	}
	return len(obj) > 0 && requestNouns[obj[0]]
}

// userRequest reports whether a generic or cancellation verb has "you" as its subject:
// "you cancelled it" reports the user's request, not a state.
func userRequest(s site, class verbClass) bool {
	return s.g.subj == "you" && class != classOwn
}

// negations counts the negations that bear on the verb (step 9): in its group ("have
// not", "never"), on its subject ("nothing is scheduled", "no booking was made") and
// after it ("I've made no booking", "there is no booking").
func negations(s site) int {
	return s.x.negators(s.g) + subjectNegation(s) + objectNegation(s)
}

// subjectNegation is 1 for a negating subject ("nothing is scheduled") and 1 more for
// a negator up to three words before the subject with only determiners, "single",
// "your" or "of" between ("no booking was made", "none of your bookings were made").
func subjectNegation(s site) int {
	if s.g.subj == "" {
		return 0
	}
	n := 0
	if negators[s.g.subj] {
		n++
	}
	words, subjAt := s.x.words, s.g.from-1
	for k := subjAt - 1; k >= 0 && k >= subjAt-3; k-- {
		if negators[words[k]] {
			return n + 1
		}
		if !determiners[words[k]] && !subjectMods[words[k]] {
			break
		}
	}
	return n
}

// objectNegation counts the negators between a possession and its noun ("there is
// no booking"), or is 1 for "nothing", "none" or "no <noun>" right after a verb ("I've
// made no booking").
func objectNegation(s site) int {
	words, nouns := s.x.words, s.x.lx.nouns
	if s.v.form == formHave {
		n := 0
		for k := s.at + 1; k < len(words) && !nouns[words[k]]; k++ {
			if negators[words[k]] {
				n++
			}
		}
		return n
	}
	after := s.at + s.v.width
	if after >= len(words) {
		return 0
	}
	w := words[after]
	if w == "nothing" || w == "none" || (w == "no" && after+1 < len(words) && nouns[words[after+1]]) {
		return 1
	}
	return 0
}

// polarity returns the claim a verb class makes under n negations (step 9): own and
// generic verbs say done, cancellation verbs not done, and each negation flips it.
// Done from a cancellation verb ("it was not cancelled", "it cannot be cancelled") is
// only implied.
func polarity(class verbClass, n int) (ClaimKind, bool) {
	done := class != classCancel
	if n%2 == 1 {
		done = !done
	}
	if !done {
		return ClaimNotDone, false
	}
	return ClaimDone, class == classCancel
}

// tooLate reads "it's too late" with no claim verb of its own as done, implied (step
// 10): the stop came too late. Only the first "too late" counts, and not after "not"
// or with a modal ("it might be too late").
func tooLate(x *index) (Claim, bool) {
	words := x.words
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "too" || words[i+1] != "late" {
			continue
		}
		if i > 0 && words[i-1] == "not" {
			return Claim{}, false
		}
		g := x.group(i)
		if modalBlocks(x, g.from, g.to) {
			return Claim{}, false
		}
		return Claim{Kind: ClaimDone, Implied: true}, true
	}
	return Claim{}, false
}
