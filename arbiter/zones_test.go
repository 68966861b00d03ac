package arbiter

import (
	"strings"
	"testing"
	"time"
)

// TestDateInstantKeys: issue 25, item 6. ISO 8601 date-times are instants: every
// spelling of one instant is one key, in any session time zone; a time said without an
// offset (an ISO one too) and a relative date are read in the session's zone, days
// counted there. Before, each ISO spelling was its own text key, and every reading was
// in UTC.
func TestDateInstantKeys(t *testing.T) {
	tool := &Tool{Name: "b", Key: []KeyArg{{Arg: "slot", As: KeyDatetime}}}
	paris, tokyo, ny := zoneOf("Europe/Paris"), zoneOf("Asia/Tokyo"), zoneOf("America/New_York")
	start := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		zone *time.Location
		ref  time.Time
		slot string
		want string
	}{
		{time.UTC, start, "2026-11-05T09:30:00Z", "2026-11-05T09:30"},
		{time.UTC, start, "2026-11-05T10:30:00+01:00", "2026-11-05T09:30"},
		{time.UTC, start, "2026-11-05T04:30:00-0500", "2026-11-05T09:30"},
		{time.UTC, start, "2026-11-05T11:30+02", "2026-11-05T09:30"},
		{time.UTC, start, "2026-11-05t09:30:00.000z", "2026-11-05T09:30"},
		{time.UTC, start, " 2026-11-05 09:30 ", "2026-11-05T09:30"},
		{time.UTC, start, "2026-11-05T09:30:15Z", "2026-11-05T09:30:15"},
		{time.UTC, start, "2026-11-05T09:30:15,25Z", "2026-11-05T09:30:15.25"},
		{paris, start, "2026-11-05T10:30:00+01:00", "2026-11-05T09:30"},
		{paris, start, "2026-11-05T10:30", "2026-11-05T09:30"}, // no offset: Paris (CET in November)
		{paris, start, "2026-10-02T15:00", "2026-10-02T13:00"}, // CEST in October
		{paris, start, "tomorrow 3pm", "2026-10-02T13:00"},
		{paris, start, "demain à 15h", "2026-10-02T13:00"},
		{ny, start, "tomorrow at 3pm", "2026-10-02T19:00"},
		{time.UTC, start, "2026-11-05", "2026-11-05"},
		{tokyo, time.Date(2026, 10, 1, 20, 0, 0, 0, time.UTC), "tomorrow", "2026-10-03"}, // 05:00 on 2 October in Tokyo
		{tokyo, time.Date(2026, 10, 1, 20, 0, 0, 0, time.UTC), "tomorrow 9am", "2026-10-03T00:00"},
		// 24 hours after 00:30 on the day New York falls back (1 November 2026) is
		// 23:30 the same day; "tomorrow" is still the next calendar day.
		{ny, time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC), "tomorrow", "2026-11-02"},
		// Not dates: text keys.
		{time.UTC, start, "2026-02-30T09:00Z", "2026-02-30t09:00z"},
		{time.UTC, start, "2026-11-05T24:00Z", "2026-11-05t24:00z"},
		{time.UTC, start, "2026-11-05T09:30+15:00", "2026-11-05t09:30+15:00"},
		{time.UTC, start, "2026-11-05T09:30 or 10:30", "2026-11-05t09:30 or 10:30"},
	}
	for _, c := range cases {
		got := BusinessKey(tool, map[string]any{"slot": c.slot}, "", "fr", c.ref.In(c.zone))
		if want := "b(slot=" + c.want + ")"; got != want {
			t.Errorf("%s in %s: key %q, want %q", c.slot, c.zone, got, want)
		}
	}
}

// TestReissueInAnotherSpelling: issue 25, item 6, the session of the report: the
// provider drops the call after its own timeout, and the model re-issues the booking
// with the slot spelled with an offset. One job, one commit, and the re-issue answered
// with it; before, a second job committed and the first one's note said "Nothing is
// scheduled".
func TestReissueInAnotherSpelling(t *testing.T) {
	h := newHarness(t, bookingPolicy())
	h.run([]timed{
		at(100, book("c1", "2026-11-05T09:30:00Z")),
		at(2600, withdrawnFor("c1")),
		at(3000, book("c2", "2026-11-05T10:30:00+01:00")),
		at(4000, prepared("c1")),
		at(5500, tick),
		at(5600, complete("c1", Committed, map[string]any{"reference": "R-1"})),
		at(20000, tick),
	})
	if len(h.s.Jobs) != 1 || h.commits() != 1 {
		t.Fatalf("%d jobs, %d commits; want the re-issue joined to the first job", len(h.s.Jobs), h.commits())
	}
	h.check(want{
		decisions: []wantDecision{{"c1", 5500, DecisionCommit, "grace window"}},
		responses: []wantResponse{{"c2", 5600, map[string]any{"status": "committed", "duplicate_of": "c1"}}},
		skips:     []wantSkip{{"c1", 2600, string(SkipProviderTimeout)}},
	})
}

func withdrawnFor(ids ...string) action {
	return ev(ToolCallCancellation{CallIDs: ids, Reason: CancelProviderTimeout})
}

// TestNoteNeverSaysNothingScheduled: issue 25, item 6. A note about a job that was
// not made says "Nothing is scheduled" only when no other job of its business key
// committed or may have; otherwise it says which one stands. Before, every such note
// said "Nothing is scheduled". (A job whose commit is running or unknown absorbs every
// repeat of its key, so only a committed one meets another job of its key.)
func TestNoteNeverSaysNothingScheduled(t *testing.T) {
	h := newHarness(t, bookingPolicy())
	h.run([]timed{
		at(100, book("c1", "tomorrow 3pm")),
		at(1100, prepared("c1")),
		at(2600, tick),
		at(2700, complete("c1", Committed, map[string]any{"reference": "R-1"})),
		// Past the dedupe window, and the user asked again: a new job.
		at(35000, userStart), at(36000, said("Book that again for me.")), at(36000, userEnd),
		at(36500, book("c2", "tomorrow at 3pm")),
		at(37000, userStart), at(37800, said("Stop, don't book it.")), at(37800, userEnd),
		at(38000, complete("c2", Cancelled, nil)),
	})
	if len(h.s.Jobs) != 2 || h.s.Jobs[1].Key != h.s.Jobs[0].Key {
		t.Fatalf("want two jobs of one key, got %d", len(h.s.Jobs))
	}
	n := h.notes[len(h.notes)-1]
	if n.JobID != h.s.Jobs[1].ID || strings.Contains(strings.ToLower(n.Text), "nothing is scheduled") {
		t.Fatalf("note %q: must not say nothing is scheduled while job-1 is committed", n.Text)
	}
	if want := "IS confirmed (reference R-1): tell the user it stands"; !strings.Contains(n.Text, want) {
		t.Fatalf("note %q: want it to say %q", n.Text, want)
	}
	// Nothing else of the key: the note says so, as before.
	h = newHarness(t, bookingPolicy())
	h.run([]timed{
		at(100, book("c1", "tomorrow 3pm")),
		at(500, userStart), at(1000, said("Stop.")), at(1000, userEnd),
		at(1100, complete("c1", Cancelled, nil)),
	})
	if n := h.notes[len(h.notes)-1]; !strings.HasSuffix(n.Text, "Nothing is scheduled.") {
		t.Fatalf("note %q: want nothing is scheduled", n.Text)
	}
}

// TestConfigureTimeZone: a session's zone is an IANA name the arbiter knows; anything
// else (the machine's "Local" included) is refused naming time_zone.
func TestConfigureTimeZone(t *testing.T) {
	for _, z := range []string{"Europe/Paris", "UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+5"} {
		sp := newStepper(t, bookingPolicy())
		sp.do(0, Configure{TimeZone: z})
		if sp.s.TimeZone != z {
			t.Errorf("%s: session zone %q", z, sp.s.TimeZone)
		}
	}
	for _, z := range []string{"Local", "Mars/Olympus", "Europe//Paris", "../etc/passwd", "+01:00", "CET\x00", strings.Repeat("A", 65)} {
		sp := newStepper(t, bookingPolicy())
		if _, err := sp.e.Step(sp.s, ms(0), Configure{TimeZone: z}); KindOf(err) != Invalid || FieldOf(err) != "time_zone" {
			t.Errorf("%q: %v, want invalid naming time_zone", z, err)
		}
	}
}

// FuzzReadISODate: any text reads without panicking, the same way twice, and a key it
// gives is a day or an instant that reads back as itself (instantKey is canonical).
func FuzzReadISODate(f *testing.F) {
	for _, s := range []string{"2026-11-05T09:30:00Z", "2026-11-05 10:30+01:00", "2026-11-05", "2026-02-29", "2028-02-29T00:00:60Z",
		"2026-11-05T09:30:15.123456789123-0330", "2026-11-05T", "2026-11-05T9:30", "９９９９-01-01", "2026-11-05T09:30+14:01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := readISODate(s, time.UTC)
		if k2, ok2 := readISODate(s, time.UTC); k != k2 || ok != ok2 {
			t.Fatalf("%q read twice: %q %v, %q %v", s, k, ok, k2, ok2)
		}
		if !ok {
			return
		}
		if again, ok := readISODate(k, time.UTC); !ok || again != k {
			t.Fatalf("%q keyed %q, which reads back as %q %v", s, k, again, ok)
		}
	})
}
