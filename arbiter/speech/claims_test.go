package speech

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const (
	cDone = ClaimDone
	cNot  = ClaimNotDone
	cNone = ClaimNone
)

// claimCases are short model statements with the verdict they must read as. The
// first block is every distinct model statement in testdata/traces (model_transcript
// pieces of one turn, joined); the second the statements quoted in the third seed.
var claimCases = []struct {
	text string
	want ClaimKind
}{
	// Recorded traces (testdata/traces/*.jsonl).
	{"The booking was already made before your request to stop.", cDone},                                   // A_off_run1
	{"I'm sorry, but the slot has already been booked.", cDone},                                            // A_off_run2
	{"The booking for tomorrow at 3 PM has already been made.", cDone},                                     // A_off_run3
	{"The booking was not made, so nothing is scheduled.", cNot},                                           // A_on_run1
	{"The booking was not made, and nothing is scheduled.", cNot},                                          // A_on_run2
	{"The booking was cancelled, so nothing is scheduled.", cNot},                                          // A_on_run3
	{"The booking for tomorrow at 3 PM was already made before I could process your cancellation.", cDone}, // C_off_run1
	{"The booking was already made for tomorrow at 3 p.m.", cDone},                                         // C_off_run2
	{"The booking was not made.", cNot},                                                                    // C_off_run3
	{"The booking was not made, so nothing has been scheduled.", cNot},                                     // C_on_run1
	{"I have cancelled the request. No booking was made.", cNot},                                           // C_on_run2
	{"I have not booked that slot for you.", cNot},                                                         // C_on_run3, joined
	{"I have not", cNone},                // C_on_run3, first half alone
	{"booked that slot for you.", cDone}, // C_on_run3, second half alone

	// Third seed.
	{"The booking was already made and cannot be canceled.", cDone},
	{"I have stopped the process, and the slot was not booked.", cNot},
	{"It’s too late; the booking was already made.", cDone},
	{"Actually, the booking was cancelled and was never made.", cNot},
	{"The booking was already confirmed. Should I go ahead and cancel it for you?", cDone},

	// Plain done / not done.
	{"It's booked.", cDone},
	{"Your 3 PM slot for tomorrow is booked.", cDone},
	{"I've booked the 3 PM slot for you tomorrow.", cDone},
	{"The slot has been reserved.", cDone},
	{"Your appointment is confirmed.", cDone},
	{"Your reservation is confirmed for tomorrow at 3 p.m.", cDone},
	{"It went through.", cDone},
	{"You're all set for tomorrow at 3.", cDone},
	{"There's a booking for you at 3 p.m. tomorrow.", cDone},
	{"That’s been taken care of.", cDone},
	{"Done.", cDone},
	{"Booking confirmed.", cDone},
	{"I have cancelled it.", cNot},
	{"The booking was cancelled.", cNot},
	{"Booking cancelled.", cNot},
	{"Your cancellation has been processed.", cNot},
	{"The booking I made has been cancelled.", cNot},
	{"I was able to cancel it in time.", cNot},
	{"I managed to cancel it.", cNot},
	{"The booked slot was cancelled.", cNot},

	// Negation.
	{"The booking wasn't made.", cNot},
	{"It hasn't been booked yet.", cNot},
	{"I never made the booking.", cNot},
	{"I did not make the booking.", cNot},
	{"I didn't book anything.", cNot},
	{"Nothing is scheduled for tomorrow.", cNot},
	{"Nothing has been booked.", cNot},
	{"None of it was booked.", cNot},
	{"There is no booking for tomorrow at 3.", cNot},
	{"You don't have a booking.", cNot},
	{"I've made no booking.", cNot},
	{"The booking didn't go through.", cNot},
	{"The slot is no longer booked.", cNot},
	{"Not booked.", cNot},
	{"I wasn't able to book it.", cNot},
	{"I couldn't book it.", cNot},
	{"I failed to book it.", cNot},
	{"I don't think it was booked.", cNot},
	{"Don't worry, nothing was booked.", cNot},
	{"No, it's not booked.", cNot},
	{"No, it's booked.", cDone}, // the "No" answers the user, it does not negate the claim
	{"I made a mistake.", cNone},
	{"No booking exists for tomorrow at 3.", cNot},
	{"I didn't go ahead with the booking.", cNot},
	{"I went ahead with the booking.", cDone},
	{"I'm going ahead with the booking.", cNone},

	// Negated cancellation: done, implied.
	{"It cannot be cancelled.", cDone},
	{"I couldn't cancel it in time.", cDone},
	{"I didn't cancel it.", cDone},
	{"It's too late to cancel.", cDone},
	{"It is too late.", cDone},
	{"It's too late to book that slot.", cNot},
	{"It's not too late to cancel.", cNone},
	{"I'm not able to cancel it, it's already booked.", cDone},

	// "already".
	{"I'd already booked it.", cDone},
	{"The slot was already reserved.", cDone},
	{"I've already cancelled it.", cNot},
	{"It had already gone through when you asked me to stop.", cDone},

	// before / after / because.
	{"I booked it before you cancelled.", cDone},
	{"It was booked before you cancelled.", cDone},
	{"I cancelled it before it was committed.", cNot},
	{"The request was cancelled before anything was booked.", cNot},
	{"I stopped it before it went through.", cNot},
	{"The booking went through before I could stop it.", cDone},
	{"It was booked after you asked me to stop.", cDone},
	{"After you asked me to stop, I cancelled the booking.", cNot},
	{"Because you asked me to stop, nothing was booked.", cNot},
	{"You said stop before it was booked.", cNone}, // the before-clause only dates the stop
	{"Your request came in before the booking was made.", cNone},
	{"We spoke after the slot was cancelled.", cNone},
	{"I didn't book it because you asked me to stop.", cNot},

	// Offers and questions: no claim.
	{"Would you like me to cancel it?", cNone},
	{"Should I go ahead and cancel it for you?", cNone},
	{"I can cancel it if you want.", cNone},
	{"Shall I book it?", cNone},
	{"Do you want me to book the 3pm slot?", cNone},
	{"Is the booking confirmed?", cNone},
	{"It's booked?", cNone},
	{"Are you sure you want to cancel?", cNone},
	{"It can be cancelled if you like.", cNone},
	{"You asked me to cancel it.", cNone},
	{"The booking was already made, but I can cancel it.", cDone},
	{"It's booked, isn't it?", cDone},

	// Intentions, future, pending: no claim.
	{"I'll book it now.", cNone},
	{"I will cancel it.", cNone},
	{"Let me book that for you.", cNone},
	{"I'm going to book it.", cNone},
	{"I'm booking it.", cNone},
	{"Booking it now.", cNone},
	{"One moment.", cNone},
	{"One moment while I book that.", cNone},
	{"It's being booked now.", cNone},
	{"Your booking is being processed.", cNone},
	{"It will be booked shortly.", cNone},
	{"It might have been booked.", cNone},
	{"I'll go ahead and book that for you now.", cNone},
	{"I'm happy to cancel it for you.", cNone},
	{"I cannot confirm the booking yet.", cNone},

	// Corrections within a turn: the last explicit claim wins.
	{"It's booked. Sorry — it was not booked.", cNot},
	{"It wasn't booked. Actually, it was booked.", cDone},
	{"I booked it, then I cancelled it.", cNot},
	{"It wasn't booked, so it can't be cancelled.", cNot}, // implied done yields
	{"I tried to cancel it, but it was already booked.", cDone},
	{"I went ahead and booked it.", cDone},

	// Case and curly apostrophes.
	{"THE BOOKING WAS NOT MADE.", cNot},
	{"It's BOOKED.", cDone},
	{"It’s booked.", cDone},
	{"I haven’t booked it.", cNot},
	{"Nothing’s been scheduled.", cNot},
	{"wait, it’s NOT booked", cNot},
	{"I didnt book it", cNot},
}

func TestClaimVerdicts(t *testing.T) {
	if len(claimCases) < 52 {
		t.Fatalf("only %d cases", len(claimCases))
	}
	seen := map[string]bool{}
	for _, c := range claimCases {
		if seen[c.text] {
			t.Errorf("duplicate case %q", c.text)
		}
		seen[c.text] = true
		got := ReadClaims(c.text)
		if v := Verdict(got); v != c.want {
			t.Errorf("Verdict(ReadClaims(%q)) = %q, want %q; claims %+v", c.text, v, c.want, got)
		}
	}
}

// Split turns: the third seed's C run 3. Read alone, the second half says the
// opposite of what the model said; joined, it reads right.
func TestClaimSplitTurn(t *testing.T) {
	first, second := "I have not ", "booked that slot for you."
	if v := Verdict(ReadClaims(first)); v != cNone {
		t.Errorf("first half alone = %q, want no claim", v)
	}
	if v := Verdict(ReadClaims(second)); v != cDone {
		t.Errorf("second half alone = %q, want done (this is why joining matters)", v)
	}
	joined := JoinSplit(first, second)
	if joined != "I have not booked that slot for you." {
		t.Errorf("JoinSplit = %q", joined)
	}
	if v := Verdict(ReadClaims(joined)); v != cNot {
		t.Errorf("joined = %q, want not_done", v)
	}
	for _, c := range []struct{ prev, next, want string }{
		{"", "It's booked.", "It's booked."},
		{"It was ", "", "It was"},
		{"The booking was", "not made.", "The booking was not made."},
		{"The booking was ", "The booking was not made.", "The booking was not made."}, // a restart repeats the cut words
		{"It’s ", " not booked.", "It’s not booked."},
	} {
		if got := JoinSplit(c.prev, c.next); got != c.want {
			t.Errorf("JoinSplit(%q, %q) = %q, want %q", c.prev, c.next, got, c.want)
		}
	}
}

func TestClaimTurnJoiner(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	texts := func(ts []ModelTurn) []string {
		var out []string
		for _, x := range ts {
			out = append(out, x.Text)
		}
		return out
	}
	t.Run("C_on_run3", func(t *testing.T) {
		var j TurnJoiner
		var got []ModelTurn
		got = append(got, j.Piece(at(8673), "I have not ")...)
		got = append(got, j.End(at(8673), true)...)  // interrupted: held
		got = append(got, j.End(at(8684), false)...) // turn_complete with nothing open
		if len(got) != 0 || j.Pending() != "I have not " {
			t.Fatalf("cut turn returned early: %+v, pending %q", got, j.Pending())
		}
		got = append(got, j.Piece(at(9379), "booked that slot ")...)
		got = append(got, j.Piece(at(9577), "for you.")...)
		got = append(got, j.End(at(11405), false)...)
		if len(got) != 1 {
			t.Fatalf("turns %+v", got)
		}
		want := ModelTurn{Start: at(8673), End: at(11405), Text: "I have not booked that slot for you.", Joined: true}
		if got[0] != want {
			t.Errorf("turn %+v, want %+v", got[0], want)
		}
		if v := Verdict(ReadClaims(got[0].Text)); v != cNot {
			t.Errorf("verdict %q", v)
		}
	})
	t.Run("window ran out", func(t *testing.T) {
		var j TurnJoiner
		j.Piece(at(0), "I have not ")
		j.End(at(10), true)
		if got := j.Expire(at(1510)); got != nil {
			t.Fatalf("expired at the window's edge: %+v", got)
		}
		got := j.Piece(at(1511), "booked that slot for you.")
		if len(got) != 1 || got[0].Text != "I have not " || !got[0].Cut || got[0].Joined {
			t.Fatalf("held turn %+v", got)
		}
		got = j.End(at(2000), false)
		if len(got) != 1 || got[0].Text != "booked that slot for you." || got[0].Joined || got[0].Start != at(1511) {
			t.Fatalf("next turn %+v", got)
		}
	})
	t.Run("custom window and expiry", func(t *testing.T) {
		j := TurnJoiner{Window: 100 * time.Millisecond}
		j.Piece(at(0), "It was ")
		j.End(at(0), true)
		if got := texts(j.Expire(at(101))); !reflect.DeepEqual(got, []string{"It was "}) {
			t.Fatalf("expire %q", got)
		}
		if j.Pending() != "" {
			t.Fatalf("pending %q", j.Pending())
		}
	})
	t.Run("chained cuts and flush", func(t *testing.T) {
		var j TurnJoiner
		j.Piece(at(0), "The booking ")
		j.End(at(100), true)
		j.Piece(at(200), "was not ")
		j.End(at(300), true)
		j.Piece(at(400), "made.")
		got := j.Flush(at(500))
		if len(got) != 1 || got[0].Text != "The booking was not made." || !got[0].Joined || got[0].Start != at(0) {
			t.Fatalf("flush %+v", got)
		}
		j.Piece(at(600), "It's ")
		j.End(at(700), true)
		if got := texts(j.Flush(at(800))); !reflect.DeepEqual(got, []string{"It's "}) {
			t.Fatalf("flush held %q", got)
		}
		if got := j.End(at(900), true); got != nil {
			t.Fatalf("end with nothing open %+v", got)
		}
	})
}

func TestClaimDetails(t *testing.T) {
	for _, c := range []struct {
		text string
		want []Claim
	}{
		{"The booking was already made and cannot be canceled.", []Claim{
			{Kind: cDone, Clause: "The booking was already made", Already: true},
			{Kind: cDone, Clause: "cannot be canceled", Implied: true},
		}},
		{"I have cancelled the request. No booking was made.", []Claim{
			{Kind: cNot, Clause: "I have cancelled the request"},
			{Kind: cNot, Clause: "No booking was made"},
		}},
		{"The booking was already made, but I can cancel it.", []Claim{
			{Kind: cDone, Clause: "The booking was already made", Already: true},
		}},
		{"It’s too late; the booking was already made.", []Claim{
			{Kind: cDone, Clause: "It’s too late", Implied: true},
			{Kind: cDone, Clause: "the booking was already made", Already: true},
		}},
		{"The booking was already made for tomorrow at 3 p.m. Would you like me to cancel it?", []Claim{
			{Kind: cDone, Clause: "The booking was already made for tomorrow at 3 p.m.", Already: true},
		}},
		{"Would you like me to cancel it? ", nil},
		{"", nil},
	} {
		if got := ReadClaims(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ReadClaims(%q) =\n  %+v\nwant\n  %+v", c.text, got, c.want)
		}
	}
}

func TestClaimVerdictRule(t *testing.T) {
	done, not := Claim{Kind: cDone}, Claim{Kind: cNot}
	impliedDone := Claim{Kind: cDone, Implied: true}
	impliedNot := Claim{Kind: cNot, Implied: true}
	for _, c := range []struct {
		claims []Claim
		want   ClaimKind
	}{
		{nil, cNone},
		{[]Claim{{}}, cNone},
		{[]Claim{done}, cDone},
		{[]Claim{done, not}, cNot},
		{[]Claim{not, done}, cDone},
		{[]Claim{not, impliedDone}, cNot},
		{[]Claim{impliedDone, not}, cNot},
		{[]Claim{impliedDone}, cDone},
		{[]Claim{impliedDone, impliedNot}, cNot},
		{[]Claim{done, impliedNot, {}}, cDone},
	} {
		if got := Verdict(c.claims); got != c.want {
			t.Errorf("Verdict(%+v) = %q, want %q", c.claims, got, c.want)
		}
	}
}

func TestClaimLanguages(t *testing.T) {
	const s = "The booking was not made."
	for _, lang := range []string{"", "en", "EN", "en-GB", "en_US"} {
		if v := Verdict(ReadClaimsIn(lang, s)); v != cNot {
			t.Errorf("%q: %q", lang, v)
		}
	}
	for _, lang := range []string{"fr", "es", "de-DE"} {
		if got := ReadClaimsIn(lang, s); got != nil {
			t.Errorf("%q: %+v, want nil", lang, got)
		}
	}
}

// FuzzReadClaims checks that any input reads without panicking, the same way twice,
// with claims whose clauses come from the input and never ClaimNone.
func FuzzReadClaims(f *testing.F) {
	for _, c := range claimCases {
		f.Add(c.text)
	}
	for _, s := range []string{"p.m.", "a.m. It", "...", "—", "'s", "n't", "it's'", "3:00.", "e.g.", "’’’", "\xff\xfe", "I'd", "-- -", "there is", "have a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b := ReadClaims(s), ReadClaims(s)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("not deterministic: %+v vs %+v", a, b)
		}
		for _, c := range a {
			if c.Kind != cDone && c.Kind != cNot {
				t.Fatalf("kind %q", c.Kind)
			}
			if c.Clause == "" || !strings.Contains(s, c.Clause) {
				t.Fatalf("clause %q not in %q", c.Clause, s)
			}
		}
		_ = Verdict(a)
	})
}
