package speech

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var (
	smsVocabulary    = VocabularyFor([]string{"sent", "delivered"}, "send_sms", "the SMS to {to}")
	cancelVocabulary = VocabularyFor(nil, "cancel_order", "the cancellation of order {order_id}")
)

func TestVocabularyFor(t *testing.T) {
	scheduled := Vocabulary{Done: []string{"scheduled", "booked", "reserved", "rebooked", "all set"}, Nouns: Booking.Nouns}
	sent := Vocabulary{Done: []string{"sent", "delivered"}, Nouns: []string{"message", "messages", "sms", "text", "texts", "email", "emails"}}
	cancelled := Vocabulary{Done: []string{"cancelled", "canceled", "called off"}, Nouns: []string{"cancellation", "cancellations", "cancelation"}}
	for _, c := range []struct {
		claims         []string
		name, describe string
		want           Vocabulary
	}{
		// Derived: the name's first word, then describe, then the name's other words.
		{nil, "book_slot", "the booking for {slot}", Booking},
		{nil, "reserveTable", "", Booking},
		{nil, "schedule_call", "", scheduled},
		{nil, "send_sms", "the SMS to {to}", sent},
		{nil, "pay_invoice", "", Vocabulary{Done: []string{"paid"}, Nouns: []string{"payment", "payments"}}},
		{nil, "order_pizza", "", Vocabulary{Done: []string{"ordered"}, Nouns: []string{"order", "orders"}}},
		{nil, "cancel_order", "", cancelled},
		{nil, "add_to_cart", "", Vocabulary{Done: []string{"added"}}},
		{nil, "submit-form", "", Vocabulary{Done: []string{"submitted"}, Nouns: []string{"submission", "submissions"}}},
		{nil, "delete_account", "", Vocabulary{Done: []string{"deleted"}}},
		{nil, "withdraw_offer", "", Vocabulary{Done: []string{"withdrawn", "withdrew"}}},
		{nil, "checkout", "the payment of {amount}", Vocabulary{Done: []string{"paid"}, Nouns: []string{"payment", "payments"}}},
		{nil, "slot_booking", "", Booking},                // no cue first: the other words of the name
		{nil, "tool", "{book} the {order}", Vocabulary{}}, // placeholders are not words
		{nil, "end_call", "", Vocabulary{}},
		{nil, "", "", Vocabulary{}},
		// Given: as given, with the nouns of the side effects they claim.
		{[]string{"sent", "delivered"}, "notify", "", sent},
		{[]string{"Cancelled"}, "x", "", Vocabulary{Done: []string{"Cancelled", "canceled"}, Nouns: cancelled.Nouns}},
		{[]string{"canceled", "cancelled"}, "x", "", Vocabulary{Done: []string{"canceled", "cancelled"}, Nouns: cancelled.Nouns}},
		{[]string{"went out"}, "send_sms", "", Vocabulary{Done: []string{"went out"}}},
		{[]string{}, "send_sms", "", Vocabulary{Done: []string{}}},
	} {
		if got := VocabularyFor(c.claims, c.name, c.describe); !reflect.DeepEqual(got, c.want) {
			t.Errorf("VocabularyFor(%q, %q, %q) = %+v, want %+v", c.claims, c.name, c.describe, got, c.want)
		}
	}
}

func TestCheckClaimVerb(t *testing.T) {
	for _, ok := range []string{"sent", "Delivered", "went out", "all set", "put through"} {
		if err := CheckClaimVerb(ok); err != nil {
			t.Errorf("CheckClaimVerb(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "  ", "is", "not", "the", "will", "it", "do", "a"} {
		if err := CheckClaimVerb(bad); err == nil {
			t.Errorf("CheckClaimVerb(%q) = nil", bad)
		}
	}
}

func TestBaseForms(t *testing.T) {
	for past, want := range map[string][]string{
		"sent":       {"send"},
		"booked":     {"book", "booke"},
		"scheduled":  {"schedul", "schedule"},
		"submitted":  {"submitt", "submitte", "submit"},
		"cancelled":  {"cancell", "cancelle", "cancel"},
		"applied":    {"apply"},
		"called off": {"call off", "calle off", "cal off"},
		"used":       {"use"}, // "us" is a pronoun
		"all set":    nil,
	} {
		if got := baseForms(past); !slices.Equal(got, want) {
			t.Errorf("baseForms(%q) = %q, want %q", past, got, want)
		}
	}
}

// TestVocabularyClaims: statements read with the vocabulary of a tool that sends an
// SMS and of one that cancels an order. Each tool's own verbs claim done; a booking
// verb means nothing to them; "cancelled" claims done for the cancellation, and not
// done for the SMS as for a booking.
func TestVocabularyClaims(t *testing.T) {
	none := Vocabulary{}
	for _, c := range []struct {
		v    Vocabulary
		text string
		want ClaimKind
		own  bool // the deciding claim is Own
	}{
		{smsVocabulary, "Okay, I've sent it.", cDone, true},
		{smsVocabulary, "Done, I've sent it.", cDone, true},
		{smsVocabulary, "The message was delivered.", cDone, true},
		{smsVocabulary, "I didn't send it.", cNot, true},
		{smsVocabulary, "I couldn't send the message.", cNot, true},
		{smsVocabulary, "Nothing was sent.", cNot, true},
		{smsVocabulary, "The text has not been sent yet.", cNot, true},
		{smsVocabulary, "Your message went through.", cDone, false}, // a generic verb about its noun
		{smsVocabulary, "There is no message.", cNot, true},
		{smsVocabulary, "I'll send it now.", cNone, false},
		{smsVocabulary, "Shall I send it?", cNone, false},
		{smsVocabulary, "It's booked.", cNone, false},
		{smsVocabulary, "The booking went through.", cNone, false},
		{smsVocabulary, "I've cancelled it.", cNot, false},
		{smsVocabulary, "I'd paid it.", cNone, false},

		{cancelVocabulary, "Your order has been cancelled.", cDone, true},
		{cancelVocabulary, "I've canceled your order.", cDone, true},
		{cancelVocabulary, "Your order was called off.", cDone, true},
		{cancelVocabulary, "The order was not cancelled.", cNot, true},
		{cancelVocabulary, "I couldn't cancel your order.", cNot, true},
		{cancelVocabulary, "It's too late to cancel your order.", cNot, true},
		{cancelVocabulary, "Your cancellation has been processed.", cDone, false},
		{cancelVocabulary, "There is no cancellation.", cNot, true},
		{cancelVocabulary, "I have cancelled the request.", cNot, false}, // withdrawing the request
		{cancelVocabulary, "I stopped the cancellation.", cNot, false},
		{cancelVocabulary, "Would you like me to cancel it?", cNone, false},
		{cancelVocabulary, "Okay, I've sent it.", cNone, false},
		{cancelVocabulary, "It's too late.", cDone, false},

		{none, "It's done.", cDone, false},
		{none, "Okay, I've sent it.", cNone, false},
		{none, "It's booked.", cNone, false},
		{none, "There is a booking.", cNone, false},
		{none, "It was cancelled.", cNot, false},

		{Booking, "It's booked.", cDone, true},
		{Booking, "There's a booking for you.", cDone, true},
		{Booking, "Done.", cDone, false},
		{Booking, "The booking went through.", cDone, false},
		{Booking, "Okay, I've sent it.", cNone, false},
	} {
		claims := c.v.ReadClaims(c.text)
		d := Deciding(claims)
		if d.Kind != c.want || d.Own != c.own || Verdict(claims) != c.want {
			t.Errorf("%v.ReadClaims(%q): deciding %+v, want %q own=%v", c.v.Done, c.text, d, c.want, c.own)
		}
		if en := c.v.ReadClaimsIn("en-US", c.text); !reflect.DeepEqual(en, claims) {
			t.Errorf("ReadClaimsIn(en-US, %q) = %+v, ReadClaims %+v", c.text, en, claims)
		}
		if es := c.v.ReadClaimsIn("es", c.text); es != nil {
			t.Errorf("ReadClaimsIn(es, %q) = %+v, want nil", c.text, es)
		}
	}
}

// TestVocabularyReadsBooking: the vocabulary VocabularyFor derives for book_slot is
// Booking, and Vocabulary.ReadClaims with it reads as ReadClaims does, claim for
// claim (the claim table of testdata/claims/traces.golden is read by both alike).
func TestVocabularyReadsBooking(t *testing.T) {
	v := VocabularyFor(nil, "book_slot", "the booking for {slot}")
	if !reflect.DeepEqual(v, Booking) {
		t.Fatalf("book_slot's vocabulary %+v, want Booking", v)
	}
	for _, c := range claimCases {
		if got, want := v.ReadClaims(c.text), ReadClaims(c.text); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, ReadClaims %+v", c.text, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := statement().Draw(t, "s")
		if got, want := v.ReadClaims(s), ReadClaims(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, ReadClaims %+v", s, got, want)
		}
	})
}

// TestVocabularyRenamed: the reader knows a vocabulary's words by their role, not by
// their spelling. Booking with every own verb and noun renamed ("booked" ->
// "zbooked", "booking" -> "zbooking") reads a statement with the renamed words as
// Booking reads the original: the same kinds, in the same clauses, the same flags.
func TestVocabularyRenamed(t *testing.T) {
	rename := func(w string) string { return "z" + w }
	var v Vocabulary
	renamed := map[string]string{}
	for _, d := range Booking.Done {
		if strings.Contains(d, " ") {
			continue // "all set": its words have other roles
		}
		v.Done = append(v.Done, rename(d))
		renamed[d] = rename(d)
		for _, b := range baseForms(d) {
			renamed[b] = rename(b)
		}
	}
	for _, n := range Booking.Nouns {
		v.Nouns = append(v.Nouns, rename(n))
		renamed[n] = rename(n)
	}
	orig := Vocabulary{Done: slices.DeleteFunc(slices.Clone(Booking.Done), func(d string) bool { return strings.Contains(d, " ") }), Nouns: Booking.Nouns}
	words := slices.DeleteFunc(slices.Clone(propVocabulary), func(w string) bool { return w == "all set" })
	word := rapid.SampledFrom(words)
	sep := rapid.SampledFrom([]string{" ", " ", " ", ", ", ". ", "? ", " and "})
	rapid.Check(t, func(t *rapid.T) {
		var a, b strings.Builder
		for _, w := range rapid.SliceOfN(word, 0, 30).Draw(t, "words") {
			s := sep.Draw(t, "sep")
			a.WriteString(w + s)
			ws := strings.Fields(w)
			for i, x := range ws {
				if r, ok := renamed[x]; ok {
					ws[i] = r
				}
			}
			b.WriteString(strings.Join(ws, " ") + s)
		}
		got, want := v.ReadClaims(b.String()), orig.ReadClaims(a.String())
		if len(got) != len(want) {
			t.Fatalf("%q: %+v\nrenamed %q: %+v", a.String(), want, b.String(), got)
		}
		for i := range got {
			got[i].Clause, want[i].Clause = "", ""
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v\nrenamed %q: %+v", a.String(), want, b.String(), got)
		}
	})
}
