package speech

// The claim reader (issue 7): what the model tells the user about a job.
//
// ReadClaims reads one model turn (its output transcription) and returns, per clause,
// whether the clause says the job's side effect happened (done), did not happen
// (not_done) or neither (questions, offers, intentions, progress). Verdict joins a
// turn's claims into one. Both are pure and deterministic: rules over words, no model,
// no clock. The engine compares the verdict with the job's real state and, when they
// disagree, sends a corrective note.
//
// A statement is read with one side effect's Vocabulary (vocabulary.go): its own verbs
// and nouns. ReadClaims reads with Booking, whose words the rules below name as
// examples ("booked", "booking"); Vocabulary.ReadClaims with any other, which
// VocabularyFor gives a tool from its policy (send_sms: sent, delivered; cancel_order:
// cancelled). Read with another vocabulary, "booking" below stands for its nouns and
// the booking verbs for its own verbs.
//
// # How a statement is read
//
// Each step names the function that implements it: steps 1 and 2 are in tokens.go and
// clauses.go, steps 3 to 11 in rules.go (readClause applies them in order), the
// vocabulary in vocab.go.
//
//  1. Normalise (tokens): case-fold, curly apostrophes (’ ‘ ʼ) become ', contractions
//     are expanded ("wasn't" -> "was not", "it's" -> "it is", "I'd booked" -> "I had
//     booked", "cannot" -> "can not"; also without apostrophe: "wasnt", "didnt";
//     expand), "p.m."/"a.m." stay one word (scanWord).
//  2. Split into clauses (clauses) at sentence punctuation (. ! ? ; : — – …), commas,
//     and the conjunctions "but", "and", "so", "because", "however", "although",
//     "though", "whereas". A clause without a subject of its own — one that starts
//     with an auxiliary, an adverb, a negation or a claim verb ("and was never made",
//     "Done.") — inherits whether the previous clause was about the booking
//     (clauseTopic).
//  3. Per clause, drop a leading discourse frame ("sorry", "actually", "I'm afraid",
//     "I can confirm that", "it looks like", ...). "I don't think" / "I don't
//     believe" are dropped but count as a negation (dropFrames).
//  4. No claim if the clause is subordinate (starts with before, after, until, when,
//     while, once, if, unless, whether, since, than, as soon as, by the time, so
//     that, in case, in order to; startsSubordinate), or a question (the last clause
//     of a sentence ending in "?", or one that starts with an inverted auxiliary —
//     "would you", "should I", "shall I", "is it", "do you" — or a wh-word;
//     isQuestion).
//  5. Cut the clause at the first subordinator after its start (cutAtSubordinator):
//     a before/after/when clause says when something happened, not whether, so "The
//     booking was already made before your request to stop" reads as "the booking was
//     already made" (done), "I cancelled it before it was committed" as "I cancelled
//     it" (not_done) and "It was booked before you cancelled" as "it was booked"
//     (done).
//  6. Drop a relative clause after a booking noun when a main verb follows
//     (dropRelative): "the booking (that) you asked for was cancelled" -> "the booking
//     was cancelled".
//  7. Find the first licensed claim verb (firstClaim, claimAt):
//     - own verbs, the vocabulary's Done (booked, reserved, scheduled, "all set" in
//     Booking; sent, delivered for an SMS) and their base forms (done; Claim.Own). An
//     own verb that is a cancellation verb too ("cancelled" for a tool that cancels
//     an order) is an own verb, except of a request ("I cancelled the request": a
//     cancellation; objectClass);
//     - generic verbs: made, done, completed, complete, confirmed, committed,
//     finalized, secured, placed, processed, exists, went/gone through, went ahead
//     with, set up, locked in, taken care of (done) — only when the clause is about
//     the booking (booking, reservation, appointment, slot, it, that, this,
//     everything, ...) or is a fragment of at most two words ("Done."), and not when
//     their object is something else ("I made a note"; genericAboutBooking);
//     - cancellation verbs: cancelled/canceled, stopped, released, withdrawn, aborted,
//     halted, voided, removed, deleted, undone, reverted, reversed, called off
//     (not_done), not when their object is something else ("I stopped the music";
//     cancelsSomethingElse). With "you" as subject generic and cancellation verbs
//     report the user's request, not a state: no claim (userRequest). A generic
//     verb whose subject or object is "cancellation" is a cancellation ("your
//     cancellation has been processed": not_done; cancellationNoun), unless
//     cancelling is the vocabulary's own side effect (then done);
//     - "there is a booking" / "you have a booking" (done; "no booking": not_done;
//     possessionAt).
//     The verbs are looked up by lexicon.verbAt. A past form counts after an auxiliary (is,
//     was, has been, got ...), after a subject ("I booked", "the booking made"), or at
//     the start of a fragment ("booked that slot for you."); not after "being" ("it is
//     being booked": pending) and not as an adjective ("the booked slot")
//     (licensedPast). A base form counts only after do-support ("I did not book it"),
//     a negated ability ("I can't book it", "cannot be cancelled") (licensedBase), or
//     "able to" / "managed to" / "unable to" / "failed to" / "too late to"
//     (infinitive). Progressive forms ("I'm booking it") never count.
//  8. Modality (modalBlocks): a modal or intention word in the verb's group (the
//     words back to its subject: will, would, shall, should, may, might, must, can,
//     could, going to, let me, want, need, hope, plan, try, ask, request, prefer,
//     like, and any other "X to <verb>") makes it no claim: "I'll book it now", "let
//     me book that", "I can cancel it if you want". Negated ability is the exception:
//     "can't"/"couldn't" + verb is a claim.
//  9. Polarity (polarity, negations): booking and generic verbs say done,
//     cancellation verbs not_done; each negation flips it (not, never, no, nothing,
//     none, neither, nor, nobody, unable, failed in the verb group or on its subject;
//     "nothing"/"no booking" right after the verb; "too late to"). So "nothing is
//     scheduled", "no booking was made" and "it is no longer booked" are not_done,
//     "it cannot be cancelled" and "it's too late to cancel" are done. "It's not too
//     late to cancel" and "I can't confirm the booking" (uncertainty) are no claim.
//  10. "It's too late" with no verb of its own is done (the stop came too late;
//     tooLate).
//  11. Already is set when the clause says "already" (saysAlready).
//
// A claim that is only inferred — done because something was not or could not be
// cancelled ("it can't be cancelled", "I didn't cancel it", "it's too late") — is
// marked Implied; Verdict lets an explicit claim in the same turn override it.
//
// # What it does not do
//
// It reads one side effect's vocabulary at a time: it does not tell two jobs apart
// ("I cancelled the 3pm and booked the 4pm" is one verdict, done), does not resolve
// elliptic answers ("Yes, it was."), and treats future statements as no claim ("I
// won't book it"). The base forms of a vocabulary's verbs are guessed from their past
// forms ("sent": send; "scheduled": schedul and schedule), so an irregular verb the
// guess does not know ("flew") claims only in its past form.
// Within a clause only the first licensed claim verb counts, so a transcript without
// punctuation reads as one long clause and its first claim: "the booking was not made
// it is booked now" is not_done, where the punctuated turn is done (Verdict's last
// claim wins).
// English only; ReadClaimsIn returns nil for other languages.

import "strings"

// ClaimKind is what a statement claims about the job's side effect.
type ClaimKind string

const (
	// ClaimDone: the side effect happened ("it's booked", "the booking was already
	// made", "I've booked that slot", "it's confirmed").
	ClaimDone ClaimKind = "done"
	// ClaimNotDone: the side effect did not happen or was undone ("the booking was not
	// made", "nothing is scheduled", "I have cancelled the request", "I have not booked
	// that slot").
	ClaimNotDone ClaimKind = "not_done"
	// ClaimNone: no claim. Questions and offers ("would you like me to cancel it?",
	// "shall I book it?"), intentions ("I'll book it now", "let me book that"),
	// progress ("I'm booking it", "one moment").
	ClaimNone ClaimKind = ""
)

// Claim is one claim found in a statement.
type Claim struct {
	// Kind is ClaimDone or ClaimNotDone (ReadClaims never returns ClaimNone).
	Kind ClaimKind
	// Clause is the clause the claim came from, as written in the input.
	Clause string
	// Already is set when the clause says "already" ("it was already booked").
	Already bool
	// Implied is set when the claim is an inference rather than a statement about
	// the booking: done from "it cannot be cancelled", "it's too late (to cancel)",
	// "I didn't cancel it". An explicit claim in the same turn overrides it (Verdict).
	Implied bool
	// Own is set when the claim's verb is one of the vocabulary's own (Vocabulary.Done
	// or a base form of one: "booked", "I didn't send it") or a possession of one of
	// its nouns ("there is a booking"); not for the generic verbs ("done", "it went
	// through"), the cancellation verbs and "it's too late", which every vocabulary
	// shares. A claim that is Own is about this vocabulary's side effect in
	// particular.
	Own bool
}

// ReadClaims reads a model statement (one turn's output transcription, possibly
// several sentences) about a booking (the Booking vocabulary; Vocabulary.ReadClaims
// reads with another) and returns the claims, one per clause that makes one, in
// order; nil when there are none. The language is English; see ReadClaimsIn for
// others. The rules are described at the top of claims.go. ReadClaims is pure,
// deterministic and safe for concurrent use; it takes time and memory linear in
// len(text) (times a constant for the vocabulary), whatever the text. The caller owns
// the returned slice.
func ReadClaims(text string) []Claim {
	return readClaims(bookingLexicon, text)
}

// ReadClaims is ReadClaims (the function) with v's verbs and nouns: what a statement
// claims about the side effect v names. The first read of a vocabulary compiles it
// (its words, the guessed base forms of its verbs), which later reads reuse; safe for
// concurrent use.
func (v Vocabulary) ReadClaims(text string) []Claim {
	return readClaims(lexiconOf(v), text)
}

// ReadClaimsIn is ReadClaimsIn (the function) with v's verbs and nouns.
func (v Vocabulary) ReadClaimsIn(lang, text string) []Claim {
	if !english(lang) {
		return nil
	}
	return v.ReadClaims(text)
}

func readClaims(lx *lexicon, text string) []Claim {
	r := reader{x: index{lx: lx}}
	var out []Claim
	topic := false
	for _, cl := range clauses(tokens(text)) {
		c, ok, t := r.readClause(cl.words, cl.question, topic)
		topic = t
		if !ok {
			continue
		}
		c.Clause = strings.TrimSpace(text[cl.start:cl.end])
		out = append(out, c)
	}
	return out
}

// ReadClaimsIn is ReadClaims for a session language (BCP 47: "en", "en-GB"; empty
// means English). Other languages have no rules yet and return nil: no claim, so the
// engine corrects nothing rather than something it misread.
func ReadClaimsIn(lang, text string) []Claim {
	if !english(lang) {
		return nil
	}
	return ReadClaims(text)
}

// english reports whether a session language (BCP 47; empty: English) is English.
func english(lang string) bool {
	l := strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	return l == "" || l == "en"
}

// Verdict joins the claims of one turn into what the turn tells the user: the last
// explicit claim wins, so a correction later in the turn overrides the first ("It's
// booked. Sorry — it was not booked." is not_done). The exception: implied claims
// (Claim.Implied: done only because something "can't be cancelled", "wasn't
// cancelled" or "it's too late") count only when the turn has no explicit claim, so
// "It wasn't booked, so it can't be cancelled." is not_done. No claims: ClaimNone.
func Verdict(claims []Claim) ClaimKind {
	return Deciding(claims).Kind
}

// Deciding returns the claim Verdict's answer comes from: the last explicit claim, or
// with none the last implied one; a zero Claim (ClaimNone) when there are no claims.
func Deciding(claims []Claim) Claim {
	var explicit, implied Claim
	for _, c := range claims {
		switch {
		case c.Kind == ClaimNone:
		case c.Implied:
			implied = c
		default:
			explicit = c
		}
	}
	if explicit.Kind != ClaimNone {
		return explicit
	}
	return implied
}
