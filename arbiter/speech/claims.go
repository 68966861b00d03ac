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
// # How a statement is read
//
//  1. Normalise: case-fold, curly apostrophes (’ ‘ ʼ) become ', contractions are
//     expanded ("wasn't" -> "was not", "it's" -> "it is", "I'd booked" -> "I had
//     booked", "cannot" -> "can not"; also without apostrophe: "wasnt", "didnt"),
//     "p.m."/"a.m." stay one word.
//  2. Split into clauses at sentence punctuation (. ! ? ; : — – …), commas, and the
//     conjunctions "but", "and", "so", "because", "however", "although", "though",
//     "whereas". A clause after "and"/"but"/... without its own subject ("and was
//     never made") inherits the previous clause's topic.
//  3. Per clause, drop a leading discourse frame ("sorry", "actually", "I'm afraid",
//     "I can confirm that", "it looks like", ...). "I don't think" / "I don't
//     believe" are dropped but count as a negation.
//  4. No claim if the clause is subordinate (starts with before, after, until, when,
//     while, once, if, unless, whether, since, as soon as, by the time, so that, in
//     case), or a question (the last clause of a sentence ending in "?", or one that
//     starts with an inverted auxiliary — "would you", "should I", "shall I", "is it",
//     "do you" — or a wh-word).
//  5. Cut the clause at the first subordinator after its start: a before/after/when
//     clause says when something happened, not whether, so "The booking was already
//     made before your request to stop" reads as "the booking was already made"
//     (done), "I cancelled it before it was committed" as "I cancelled it" (not_done)
//     and "It was booked before you cancelled" as "it was booked" (done).
//  6. Drop a relative clause after a booking noun when a main verb follows: "the
//     booking (that) you asked for was cancelled" -> "the booking was cancelled".
//  7. Find the first licensed claim verb:
//     - booking verbs: booked, reserved, scheduled, "all set" (done);
//     - generic verbs: made, done, completed, complete, confirmed, committed,
//     finalized, secured, placed, processed, exists, went/gone through, went ahead
//     with, set up, locked in, taken care of (done) — only when the clause is about the booking (booking,
//     reservation, appointment, slot, it, that, this, everything, ...) or is a bare
//     fragment ("Done."), and not when their object is something else ("I made a
//     note");
//     - cancellation verbs: cancelled/canceled, stopped, released, withdrawn, aborted,
//     halted, voided, removed, deleted, undone, reverted, reversed, called off
//     (not_done). With "you" as subject they report the user's request, not a state: no claim. A generic
//     verb whose subject or object is "cancellation" is a cancellation ("your
//     cancellation has been processed": not_done);
//     - "there is a booking" / "you have a booking" (done; "no booking": not_done).
//     A past form counts after an auxiliary (is, was, has been, got ...), after a
//     subject ("I booked", "the booking made"), or at the start of a fragment ("booked
//     that slot for you."); not after "being" ("it is being booked": pending) and not
//     as an adjective ("the booked slot"). A base form counts only after do-support
//     ("I did not book it"), a negated ability ("I can't book it", "cannot be
//     cancelled"), or "able to" / "managed to" / "unable to" / "failed to" / "too late
//     to". Progressive forms ("I'm booking it") never count.
//  8. Modality: a modal or intention word in the verb's group (will, would, shall,
//     should, may, might, must, can, could, going to, let me, want, need, hope, plan,
//     try, ask, request, prefer, like, and any other "X to <verb>") makes it no claim:
//     "I'll book it now", "let me book that", "I can cancel it if you want". Negated
//     ability is the exception: "can't"/"couldn't" + verb is a claim.
//  9. Polarity: booking and generic verbs say done, cancellation verbs not_done; each
//     negation in the verb group flips it (not, never, no, nothing, none, neither,
//     nor, nobody, unable, failed; "nothing"/"no booking" right after the verb;
//     "too late to"). So "nothing is scheduled", "no booking was made" and "it is
//     no longer booked" are not_done, "it cannot be cancelled" and "it's too late to
//     cancel" are done. "It's not too late to cancel" and "I can't confirm the
//     booking" (uncertainty) are no claim.
//  10. "It's too late" with no verb of its own is done (the stop came too late).
//  11. Already is set when the clause says "already".
//
// A claim that is only inferred — done because something was not or could not be
// cancelled ("it can't be cancelled", "I didn't cancel it", "it's too late") — is
// marked Implied; Verdict lets an explicit claim in the same turn override it.
//
// # What it does not do
//
// It reads one job's booking vocabulary: it does not tell two jobs apart ("I
// cancelled the 3pm and booked the 4pm" is one verdict, done), does not resolve
// elliptic answers ("Yes, it was."), treats future statements as no claim ("I won't
// book it"), and has no vocabulary for other side effects (sent, paid, ordered).
// English only; ReadClaimsIn returns nil for other languages.

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

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
}

// SplitJoinWindow is how long a model turn cut by `interrupted` waits for the next
// model turn: if the next turn's first transcript piece arrives within this window,
// the two are read as one statement (JoinSplit, TurnJoiner). Third seed, C run 3: "I
// have not " was cut and "booked that slot for you." followed 0.7 s later; read
// alone, the second half claims the opposite of the whole.
const SplitJoinWindow = 1500 * time.Millisecond

// ReadClaims reads a model statement (one turn's output transcription, possibly
// several sentences) and returns the claims, one per clause that makes one, in order.
// The language is English; see ReadClaimsIn for others. The rules are described at the
// top of claims.go; ReadClaims is pure and deterministic.
func ReadClaims(text string) []Claim {
	toks := claimTokens(text)
	var out []Claim
	topic := false
	for _, cl := range claimClauses(toks) {
		c, ok, t := claimReadClause(cl.words, cl.question, topic)
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
	l := strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	if l != "" && l != "en" {
		return nil
	}
	return ReadClaims(text)
}

// Verdict joins the claims of one turn into what the turn tells the user: the last
// explicit claim wins, so a correction later in the turn overrides the first ("It's
// booked. Sorry — it was not booked." is not_done). The exception: implied claims
// (Claim.Implied: done only because something "can't be cancelled", "wasn't
// cancelled" or "it's too late") count only when the turn has no explicit claim, so
// "It wasn't booked, so it can't be cancelled." is not_done. No claims: ClaimNone.
func Verdict(claims []Claim) ClaimKind {
	explicit, implied := ClaimNone, ClaimNone
	for _, c := range claims {
		switch {
		case c.Kind == ClaimNone:
		case c.Implied:
			implied = c.Kind
		default:
			explicit = c.Kind
		}
	}
	if explicit != ClaimNone {
		return explicit
	}
	return implied
}

// JoinSplit joins the text of a model turn cut by `interrupted` (prev) with the next
// model turn (next) into the statement the model was making: "I have not " +
// "booked that slot for you." -> "I have not booked that slot for you.". The halves
// are trimmed and joined with one space (a cut falls between words: the model
// restarts generation). If the next turn restarts by repeating the cut words, it is
// returned alone. Use it only when the next turn starts within SplitJoinWindow of the
// interruption; TurnJoiner does the bookkeeping.
func JoinSplit(prev, next string) string {
	p := strings.TrimRightFunc(prev, unicode.IsSpace)
	n := strings.TrimLeftFunc(next, unicode.IsSpace)
	switch {
	case p == "":
		return n
	case n == "":
		return p
	case strings.HasPrefix(strings.ToLower(n), strings.ToLower(p)):
		return n
	}
	return p + " " + n
}

// ModelTurn is one model turn as the claim reader should see it.
type ModelTurn struct {
	// Start is when the turn's first piece arrived (the cut turn's, when joined);
	// End is when it ended (turn_complete, interrupted, or the window ran out).
	Start, End time.Time
	// Text is the turn's output transcription, joined with a cut predecessor.
	Text string
	// Joined: Text includes a turn cut by `interrupted` (JoinSplit).
	Joined bool
	// Cut: the turn was cut by `interrupted` and nothing followed within the window.
	// The client may have dropped its audio, so the user may not have heard it.
	Cut bool
}

// TurnJoiner groups the model's output transcription into turns for the claim
// reader, joining a turn cut by `interrupted` with the next one when that starts
// within Window (SplitJoinWindow if zero).
//
// Guidance for the engine: call Piece for each model transcript piece, End(at, true)
// on `interrupted`, End(at, false) on `turn_complete`, and Expire on every other
// event or timer tick. Read each ModelTurn they return with ReadClaims and Verdict
// and compare with the job's state. A cut turn is held, not read, until the next
// turn starts or the window passes: read alone, "booked that slot for you." says
// done where the model said "I have not booked that slot for you.". A caller that
// wants to correct sooner may read Pending() but should act only on clauses that
// the final read keeps. The zero value is ready to use; a TurnJoiner is not safe for
// concurrent use.
type TurnJoiner struct {
	// Window is the join window; zero means SplitJoinWindow.
	Window time.Duration `json:"window,omitempty"`

	// The fields below are the joiner's state, exported only so that a Session
	// holding a TurnJoiner can be stored (JSON); do not set them.
	Open       bool       `json:"open,omitempty"`
	Start      time.Time  `json:"start,omitzero"`
	Text       string     `json:"text,omitempty"`
	Joined     bool       `json:"joined,omitempty"`
	JoinOnNext bool       `json:"join_on_next,omitempty"`
	Held       *ModelTurn `json:"held,omitempty"`
}

func (j *TurnJoiner) window() time.Duration {
	if j.Window > 0 {
		return j.Window
	}
	return SplitJoinWindow
}

// Piece adds a piece of the model's output transcription received at at. Pieces of
// one turn are concatenated as received (they carry their own spaces). It returns a
// held cut turn whose window ran out before this piece, if any.
func (j *TurnJoiner) Piece(at time.Time, text string) []ModelTurn {
	out := j.Expire(at)
	if !j.Open {
		j.Open, j.Start, j.Text, j.Joined, j.JoinOnNext = true, at, "", false, false
		if j.Held != nil {
			j.Start, j.Text, j.Joined, j.JoinOnNext = j.Held.Start, j.Held.Text, true, true
			j.Held = nil
		}
	}
	if j.JoinOnNext {
		if strings.TrimSpace(text) == "" {
			return out
		}
		j.Text, j.JoinOnNext = JoinSplit(j.Text, text), false
	} else {
		j.Text += text
	}
	return out
}

// End ends the current turn at at: interrupted for an `interrupted` event (the turn
// is held for joining), false for `turn_complete` (the turn is returned). An End with
// no open turn (the turn_complete that follows an interrupted) only expires.
func (j *TurnJoiner) End(at time.Time, interrupted bool) []ModelTurn {
	out := j.Expire(at)
	if !j.Open {
		return out
	}
	j.Open = false
	if strings.TrimSpace(j.Text) == "" {
		return out
	}
	t := ModelTurn{Start: j.Start, End: at, Text: j.Text, Joined: j.Joined}
	if interrupted {
		t.Cut = true
		j.Held = &t
		return out
	}
	return append(out, t)
}

// Expire returns the held cut turn if its window has passed at now.
func (j *TurnJoiner) Expire(now time.Time) []ModelTurn {
	if j.Held == nil || now.Sub(j.Held.End) <= j.window() {
		return nil
	}
	t := *j.Held
	j.Held = nil
	return []ModelTurn{t}
}

// Flush returns whatever is left at session end: a held cut turn and the open turn
// (ended at at as if by turn_complete).
func (j *TurnJoiner) Flush(at time.Time) []ModelTurn {
	var out []ModelTurn
	if j.Held != nil {
		out = append(out, *j.Held)
		j.Held = nil
	}
	if j.Open {
		j.Open = false
		if strings.TrimSpace(j.Text) != "" {
			out = append(out, ModelTurn{Start: j.Start, End: at, Text: j.Text, Joined: j.Joined})
		}
	}
	return out
}

// Pending returns the text the next returned turn would start with: the held cut
// turn or the open turn so far.
func (j *TurnJoiner) Pending() string {
	if j.Open {
		return j.Text
	}
	if j.Held != nil {
		return j.Held.Text
	}
	return ""
}

// ---- tokens -------------------------------------------------------------------------

// claimTok is a normalised word or a boundary, with its byte span in the input.
type claimTok struct {
	w          string // word; "" for a boundary
	kind       byte   // 'w' word, ',' comma, '.' sentence end, '?' question end
	start, end int
}

func claimApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == '‘' || r == 'ʼ' || r == '`' || r == '′'
}

func claimWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func claimRuneAt(s string, i int) rune {
	if i < 0 || i >= len(s) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// claimTokens splits s into lower-cased words (contractions expanded) and boundaries.
func claimTokens(s string) []claimTok {
	var raw []claimTok
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if claimWordRune(r) {
			end, w, abbrevEnd := claimScanWord(s, i)
			raw = append(raw, claimTok{w: w, kind: 'w', start: i, end: end})
			if abbrevEnd {
				raw = append(raw, claimTok{kind: '.', start: end, end: end})
			}
			i = end
			continue
		}
		switch r {
		case '.', '!', ';', ':', '…', '—', '–', '(', ')', '[', ']', '"', '“', '”':
			raw = append(raw, claimTok{kind: '.', start: i, end: i + n})
		case '?':
			raw = append(raw, claimTok{kind: '?', start: i, end: i + n})
		case ',':
			raw = append(raw, claimTok{kind: ',', start: i, end: i + n})
		case '-':
			// A dash between spaces, or doubled, separates; a hyphen in a word does not.
			prev, next := claimRuneAt(s, i-1), claimRuneAt(s, i+n)
			if next == '-' || unicode.IsSpace(prev) || unicode.IsSpace(next) || prev == 0 || next == 0 {
				raw = append(raw, claimTok{kind: '.', start: i, end: i + n})
			}
		}
		i += n
	}
	// Expand contractions.
	var out []claimTok
	for k, t := range raw {
		if t.kind != 'w' {
			out = append(out, t)
			continue
		}
		next := ""
		for m := k + 1; m < len(raw) && m <= k+3; m++ {
			if raw[m].kind != 'w' {
				break
			}
			if !claimSkipAdverb[raw[m].w] {
				next = raw[m].w
				break
			}
		}
		for _, w := range claimExpand(t.w, next) {
			out = append(out, claimTok{w: w, kind: 'w', start: t.start, end: t.end})
		}
	}
	return out
}

// claimScanWord reads the word starting at i: letters and digits, apostrophes inside
// a word, "3:00", "3.30", and dotted abbreviations ("p.m."). It returns the end, the
// lower-cased word with apostrophes normalised to ', and whether a dotted
// abbreviation's final period also ends a sentence (the next word is capitalised).
func claimScanWord(s string, i int) (int, string, bool) {
	var b strings.Builder
	j, seg, dotted := i, 0, false
	var prev rune
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		next := claimRuneAt(s, j+n)
		switch {
		case claimWordRune(r):
			b.WriteRune(unicode.ToLower(r))
			seg++
		case claimApostrophe(r) && unicode.IsLetter(prev) && unicode.IsLetter(next):
			b.WriteByte('\'')
		case r == '.' && unicode.IsDigit(prev) && unicode.IsDigit(next):
			b.WriteByte('.')
		case r == ':' && unicode.IsDigit(prev) && unicode.IsDigit(next):
			b.WriteByte(':')
		case r == '.' && unicode.IsLetter(prev) && seg <= 2 && unicode.IsLetter(next) &&
			(claimRuneAt(s, j+n+utf8.RuneLen(next)) == '.' || dotted):
			b.WriteByte('.')
			seg, dotted = 0, true
		default:
			goto done
		}
		prev = r
		j += n
	}
done:
	abbrevEnd := false
	if dotted && seg <= 2 && claimRuneAt(s, j) == '.' {
		j++
		k := j
		for k < len(s) {
			r, n := utf8.DecodeRuneInString(s[k:])
			if !unicode.IsSpace(r) {
				abbrevEnd = unicode.IsUpper(r)
				break
			}
			k += n
		}
	}
	return j, b.String(), abbrevEnd
}

var claimContractions = map[string][]string{
	"can't": {"can", "not"}, "cannot": {"can", "not"}, "cant": {"can", "not"},
	"won't": {"will", "not"}, "wont": {"will", "not"}, "shan't": {"shall", "not"},
	"ain't": {"is", "not"}, "let's": {"let", "us"}, "lets": {"let", "us"},
	"gonna": {"going", "to"}, "wanna": {"want", "to"}, "gotta": {"have", "to"},
	"lemme": {"let", "me"}, "dunno": {"do", "not", "know"},
	"dont": {"do", "not"}, "doesnt": {"does", "not"}, "didnt": {"did", "not"},
	"isnt": {"is", "not"}, "wasnt": {"was", "not"}, "arent": {"are", "not"},
	"werent": {"were", "not"}, "hasnt": {"has", "not"}, "havent": {"have", "not"},
	"hadnt": {"had", "not"}, "couldnt": {"could", "not"}, "wouldnt": {"would", "not"},
	"shouldnt": {"should", "not"}, "mustnt": {"must", "not"}, "neednt": {"need", "not"},
	"im": {"i", "am"}, "ive": {"i", "have"}, "youre": {"you", "are"},
	"youve": {"you", "have"}, "weve": {"we", "have"}, "thats": {"that", "is"},
	"theres": {"there", "is"}, "nothings": {"nothing", "is"},
}

// claimParticiples are past participles that can follow "'d" ("I'd booked": had).
var claimParticiples = claimSet("made done been gone taken put set got sent")

// claimExpand expands a contraction; next is the following word (for "'d").
func claimExpand(w, next string) []string {
	w = strings.Trim(w, "'")
	if e, ok := claimContractions[w]; ok {
		return e
	}
	if base, ok := strings.CutSuffix(w, "n't"); ok && base != "" {
		return []string{base, "not"}
	}
	i := strings.LastIndexByte(w, '\'')
	if i <= 0 {
		return []string{w}
	}
	base, suf := w[:i], w[i+1:]
	switch suf {
	case "s":
		return []string{base, "is"}
	case "re":
		return []string{base, "are"}
	case "ve":
		return []string{base, "have"}
	case "m":
		return []string{base, "am"}
	case "ll":
		return []string{base, "will"}
	case "d":
		if strings.HasSuffix(next, "ed") || claimParticiples[next] {
			return []string{base, "had"}
		}
		return []string{base, "would"}
	}
	return []string{w}
}

// ---- clauses ------------------------------------------------------------------------

type claimClause struct {
	words      []string
	start, end int
	question   bool
}

// claimConjunctions separate clauses (and are dropped).
var claimConjunctions = claimSet("but and so because however although though whereas")

func claimClauses(toks []claimTok) []claimClause {
	var out []claimClause
	var cur claimClause
	sentence := 0 // index in out of the current sentence's first clause
	flush := func() {
		if len(cur.words) > 0 {
			out = append(out, cur)
		}
		cur = claimClause{}
	}
	for k, t := range toks {
		switch t.kind {
		case ',':
			flush()
			continue
		case '.', '?':
			flush()
			if t.kind == '?' && len(out) > sentence {
				out[len(out)-1].question = true
			}
			sentence = len(out)
			continue
		}
		if claimConjunctions[t.w] {
			next := ""
			if k+1 < len(toks) {
				next = toks[k+1].w
			}
			if !(t.w == "so" && (next == "that" || next == "far")) {
				flush()
				continue
			}
		}
		if len(cur.words) == 0 {
			cur.start = t.start
		}
		cur.words = append(cur.words, t.w)
		cur.end = t.end
	}
	flush()
	return out
}

// ---- word classes -------------------------------------------------------------------

func claimSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func claimPhrases(ss ...string) [][]string {
	out := make([][]string, len(ss))
	for i, s := range ss {
		out[i] = strings.Fields(s)
	}
	return out
}

var (
	// claimFrames are discourse frames dropped at the start of a clause.
	claimFrames = claimPhrases(
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
	// claimNegFrames are frames that negate what follows ("I don't think it was booked").
	claimNegFrames = claimPhrases("i do not think", "i do not believe")
	// claimSubordinators open a subordinate clause: it makes no claim, and it is cut
	// off the end of a main clause.
	claimSubordinators = claimPhrases(
		"before", "after", "until", "till", "once", "when", "whenever", "while", "if",
		"unless", "whether", "since", "than", "as soon as", "by the time", "so that",
		"in case", "in order to",
	)
	claimInverted = claimSet("would should shall can could will do does did is are was were have has had may might am")
	claimInvSubj  = claimSet("i you we it that this there the your my he she they anything everything")
	claimWh       = claimSet("what which who whom whose why how where")

	claimAux        = claimSet("am is are was were be been has have had got get gets")
	claimSkipAdverb = claimSet("already just now longer also successfully actually still all really indeed definitely officially fully finally properly correctly yet both then originally even ever truly")
	claimNegators   = claimSet("not never no nothing none neither nor nobody unable failed")
	claimSubjects   = claimSet("i we you they he she it that this these those nothing everything something anything all one which who what")
	claimObjPronoun = claimSet("me him her us them")
	claimBookNouns  = claimSet("booking bookings reservation reservations appointment appointments slot slots spot table")
	claimTopic      = claimSet("booking bookings reservation reservations appointment appointments slot slots spot table it that this everything all nothing cancellation cancelation")
	claimCancelObj  = claimSet("booking bookings reservation reservations appointment appointments slot slots spot table request requests process job order operation call action it that this everything all")
	claimOtherNouns = claimSet("request requests process job order operation action cancellation cancelation")
	claimDeterminer = claimSet("a an the some another any")
	claimModals     = claimSet("will would shall should may might must can could going let want wants wanted need needs needed hope hoping plan planning try trying tried ask asked request requested prefer like likes")
	claimSuccess    = claimSet("able managed manage")
	claimFailure    = claimSet("unable failed fail")
	claimRelVerbs   = claimSet("asked requested wanted mentioned chose picked selected needed made booked described discussed gave had reserved scheduled")
)

// Verb classes: 'b' booking (done), 'g' generic (done, needs a topic), 'c'
// cancellation (not_done). Forms: 'p' past/participle, 'b' base.
type claimVerb struct {
	class, form byte
	width       int
}

var claimVerbs = map[string]claimVerb{}

func init() {
	add := func(words string, class, form byte) {
		for _, w := range strings.Fields(words) {
			claimVerbs[w] = claimVerb{class, form, 1}
		}
	}
	add("booked reserved scheduled rebooked", 'b', 'p')
	add("book reserve schedule rebook", 'b', 'b')
	add("made done completed complete confirmed finalized finalised secured placed processed committed exists exist", 'g', 'p')
	add("make do confirm finalize finalise secure place process commit", 'g', 'b')
	add("cancelled canceled stopped released withdrawn withdrew aborted halted voided removed deleted undone undid reverted reversed", 'c', 'p')
	add("cancel stop release withdraw abort halt void remove delete undo revert reverse", 'c', 'b')
}

// claimPhraseVerbs are verbs of more than one word.
var claimPhraseVerbs = []struct {
	words []string
	v     claimVerb
}{
	{strings.Fields("went through"), claimVerb{'g', 'p', 2}},
	{strings.Fields("gone through"), claimVerb{'g', 'p', 2}},
	{strings.Fields("go through"), claimVerb{'g', 'b', 2}},
	{strings.Fields("set up"), claimVerb{'g', 'p', 2}},
	{strings.Fields("locked in"), claimVerb{'g', 'p', 2}},
	{strings.Fields("put through"), claimVerb{'g', 'p', 2}},
	{strings.Fields("taken care of"), claimVerb{'g', 'p', 3}},
	{strings.Fields("went ahead with"), claimVerb{'g', 'p', 3}},
	{strings.Fields("gone ahead with"), claimVerb{'g', 'p', 3}},
	{strings.Fields("go ahead with"), claimVerb{'g', 'b', 3}},
	{strings.Fields("all set"), claimVerb{'b', 'p', 2}},
	{strings.Fields("called off"), claimVerb{'c', 'p', 2}},
	{strings.Fields("call off"), claimVerb{'c', 'b', 2}},
}

func claimHasPrefix(words, p []string) bool {
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

func claimMatch(words []string, i int, ps [][]string) int {
	for _, p := range ps {
		if claimHasPrefix(words[i:], p) {
			return len(p)
		}
	}
	return 0
}

func claimVerbAt(words []string, i int) (claimVerb, bool) {
	for _, p := range claimPhraseVerbs {
		if claimHasPrefix(words[i:], p.words) {
			return p.v, true
		}
	}
	v, ok := claimVerbs[words[i]]
	return v, ok
}

// ---- one clause ---------------------------------------------------------------------

// readClause reads one clause. prevTopic is whether the previous clause was about
// the booking (inherited by a clause without its own subject). It returns the claim,
// whether there is one, and this clause's topic for the next.
func claimReadClause(words []string, question bool, prevTopic bool) (Claim, bool, bool) {
	neg := 0
	// 3. Frames.
	for framed := true; framed && len(words) > 0; {
		framed = false
		if claimMatch(words, 0, claimSubordinators) > 0 {
			break
		}
		if n := claimMatch(words, 0, claimNegFrames); n > 0 {
			words, neg, framed = words[n:], neg+1, true
		} else if n := claimMatch(words, 0, claimFrames); n > 0 {
			words, framed = words[n:], true
		}
		if framed && len(words) > 1 && words[0] == "that" && (claimSubjects[words[1]] || claimDeterminer[words[1]] || words[1] == "no" || words[1] == "your" || words[1] == "there") {
			words = words[1:]
		}
	}
	if len(words) == 0 {
		return Claim{}, false, prevTopic
	}
	// 4. Subordinate clauses and questions.
	if claimMatch(words, 0, claimSubordinators) > 0 {
		return Claim{}, false, prevTopic
	}
	topic := prevTopic
	if !claimAux[words[0]] && !claimSkipAdverb[words[0]] && !claimNegators[words[0]] {
		if _, ok := claimVerbAt(words, 0); !ok {
			topic = false
		}
	}
	for _, w := range words {
		if claimTopic[w] {
			topic = true
		}
	}
	if question || claimWh[words[0]] ||
		(len(words) > 1 && claimInverted[words[0]] && claimInvSubj[words[1]]) {
		return Claim{}, false, topic
	}
	// 5. Cut at a subordinator.
	for i := 1; i < len(words); i++ {
		if claimMatch(words, i, claimSubordinators) > 0 {
			words = words[:i]
			break
		}
	}
	// 6. Relative clauses after a booking noun.
	words = claimDropRelative(words)
	already := false
	for _, w := range words {
		if w == "already" {
			already = true
		}
	}
	// 7-9. The first licensed claim verb.
	for i := 0; i < len(words); i++ {
		if c, ok := claimAt(words, i, neg, topic); ok {
			c.Already = already
			return c, true, topic
		}
	}
	// 10. "It's too late."
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "too" && words[i+1] == "late" {
			if i > 0 && words[i-1] == "not" {
				break
			}
			grp, _ := claimVerbGroup(words, i)
			if claimBlocked(grp) {
				break
			}
			return Claim{Kind: ClaimDone, Already: already, Implied: true}, true, topic
		}
	}
	return Claim{}, false, topic
}

// dropRelative removes "(that|which) (I|you|we) [had] <verb> [for]" after a booking
// noun when a main verb follows it.
func claimDropRelative(words []string) []string {
	for i := 0; i < len(words); i++ {
		if !claimBookNouns[words[i]] {
			continue
		}
		j := i + 1
		if j < len(words) && (words[j] == "that" || words[j] == "which") {
			j++
		}
		if j >= len(words) || (words[j] != "i" && words[j] != "you" && words[j] != "we") {
			continue
		}
		k := j + 1
		for k < len(words) && (words[k] == "had" || words[k] == "have" || words[k] == "has" || words[k] == "just" || words[k] == "already" || words[k] == "originally") {
			k++
		}
		if k >= len(words) || !claimRelVerbs[words[k]] {
			continue
		}
		k++
		if k < len(words) && (words[k] == "for" || words[k] == "about" || words[k] == "earlier") {
			k++
		}
		main := false
		for _, w := range words[k:] {
			if _, ok := claimVerbs[w]; ok || claimAux[w] {
				main = true
				break
			}
		}
		if main {
			return append(append([]string{}, words[:i+1]...), words[k:]...)
		}
	}
	return words
}

// verbGroup returns the words before i back to the verb's subject (exclusive; the
// subject is returned separately, "" for none), e.g. "not", "have" for "I have not
// booked".
func claimVerbGroup(words []string, i int) ([]string, string) {
	j := i - 1
	for j >= 0 {
		w := words[j]
		if claimSubjects[w] || claimObjPronoun[w] || claimBookNouns[w] || claimOtherNouns[w] {
			break
		}
		if _, ok := claimVerbs[w]; ok && claimVerbs[w].form == 'p' {
			break
		}
		j--
	}
	if j < 0 {
		return words[:i], ""
	}
	return words[j+1 : i], words[j]
}

// blocked reports whether a verb group carries a modal or intention word that is not
// a negated ability ("can not", "could not").
func claimBlocked(grp []string) bool {
	for k, w := range grp {
		if !claimModals[w] {
			continue
		}
		if (w == "can" || w == "could") && k+1 < len(grp) && grp[k+1] == "not" {
			continue
		}
		return true
	}
	return false
}

// claimAt reads a claim whose verb is at i, if the verb is licensed there.
func claimAt(words []string, i, neg int, topic bool) (Claim, bool) {
	v, ok := claimVerbAt(words, i)
	possession := false
	if !ok {
		// "there is (no) booking", "you have (no) booking".
		w := words[i]
		isThere := w == "there" && i+1 < len(words) && (words[i+1] == "is" || words[i+1] == "are" || words[i+1] == "was" || words[i+1] == "were")
		isHave := w == "have" || w == "has" || w == "had" || w == "got"
		if !isThere && !isHave {
			return Claim{}, false
		}
		k := i + 1
		if isThere {
			k = i + 2
		}
		for k < len(words) && k <= i+4 && (claimDeterminer[words[k]] || claimNegators[words[k]] || words[k] == "your" || words[k] == "one" || words[k] == "single" || words[k] == "current" || words[k] == "active") {
			k++
		}
		if k >= len(words) || !claimBookNouns[words[k]] {
			return Claim{}, false
		}
		v, possession = claimVerb{'b', 'x', 1}, true
	}
	grp, subj := claimVerbGroup(words, i)
	if possession && words[i] == "there" {
		grp, subj = words[:i], ""
	}
	// Negations in the verb group, on the subject, and right after the verb.
	n := neg
	for _, w := range grp {
		if claimNegators[w] {
			n++
		}
	}
	if claimNegators[subj] {
		n++
	}
	if subj != "" {
		// "no booking was made", "none of it was booked": the subject's determiner.
		s := i - len(grp) - 1
		for k := s - 1; k >= 0 && k >= s-3; k-- {
			if claimNegators[words[k]] {
				n++
				break
			}
			if !claimDeterminer[words[k]] && words[k] != "single" && words[k] != "your" && words[k] != "of" {
				break
			}
		}
	}
	after := i + v.width
	if possession {
		for k := i + 1; k < len(words) && !claimBookNouns[words[k]]; k++ {
			if claimNegators[words[k]] {
				n++
			}
		}
	} else if after < len(words) {
		w := words[after]
		if w == "nothing" || w == "none" || (w == "no" && after+1 < len(words) && claimBookNouns[words[after+1]]) {
			n++
		}
	}
	// Licensing.
	implied := false
	last := "" // the word before the verb, skipping adverbs and negators
	for k := len(grp) - 1; k >= 0; k-- {
		if !claimSkipAdverb[grp[k]] && !claimNegators[grp[k]] {
			last = grp[k]
			break
		}
	}
	toAt := -1
	for k, w := range grp {
		if w == "to" {
			toAt = k
		}
	}
	if toAt >= 0 {
		// "able to", "managed to", "unable to", "failed to", "too late to".
		gov := ""
		if toAt > 0 {
			gov = grp[toAt-1]
		} else if subj != "" {
			gov = subj
		}
		switch {
		case claimSuccess[gov]:
		case claimFailure[gov]:
			// negation counted above for unable/failed; "fail" is not a negator word.
			if gov == "fail" {
				n++
			}
		case gov == "late" && toAt >= 2 && grp[toAt-2] == "too":
			if toAt >= 3 && grp[toAt-3] == "not" {
				return Claim{}, false // "it's not too late to cancel": no claim
			}
			n++
			implied = true
		default:
			return Claim{}, false
		}
		if claimBlocked(grp[:toAt]) {
			return Claim{}, false
		}
	} else {
		if claimBlocked(grp) {
			return Claim{}, false
		}
		switch v.form {
		case 'p':
			if last == "being" {
				return Claim{}, false // pending: "it is being booked"
			}
			if !(last == "" || claimAux[last]) {
				return Claim{}, false // "the booked slot"
			}
		case 'b':
			ability := false
			for k := 0; k+1 < len(grp); k++ {
				if (grp[k] == "can" || grp[k] == "could") && grp[k+1] == "not" {
					ability = true
				}
			}
			if !(last == "did" || last == "do" || last == "does" || ability) {
				return Claim{}, false
			}
			if ability && words[i] == "confirm" {
				return Claim{}, false // "I can't confirm the booking": uncertainty, not a state
			}
		}
	}
	// Object and topic.
	class := v.class
	obj := words[after:min(len(words), after+3)]
	if class == 'g' {
		if subj == "cancellation" || subj == "cancelation" || claimContains(obj, "cancellation") || claimContains(obj, "cancelation") {
			class = 'c'
		} else {
			if len(obj) > 0 && claimDeterminer[obj[0]] && !claimContainsAny(obj[1:], claimTopic) {
				return Claim{}, false // "I made a note"
			}
			if !topic && len(words) > 2 {
				return Claim{}, false
			}
		}
	}
	if class == 'c' && len(obj) > 0 && claimDeterminer[obj[0]] && !claimContainsAny(obj[1:], claimCancelObj) && !claimContainsAny(obj[1:], claimOtherNouns) {
		return Claim{}, false // "I stopped the music"
	}
	if subj == "you" && class != 'b' {
		return Claim{}, false // "you cancelled it": the user's request, not a state
	}
	kind := ClaimDone
	if class == 'c' {
		kind = ClaimNotDone
	}
	if n%2 == 1 {
		if kind == ClaimDone {
			kind = ClaimNotDone
		} else {
			kind = ClaimDone
		}
	}
	if class == 'c' && kind == ClaimDone {
		implied = true
	}
	return Claim{Kind: kind, Implied: implied}, true
}

func claimContains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

func claimContainsAny(ws []string, m map[string]bool) bool {
	for _, x := range ws {
		if m[x] {
			return true
		}
	}
	return false
}
