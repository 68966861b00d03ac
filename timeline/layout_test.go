package timeline

import (
	"fmt"
	"strings"
	"testing"
)

// TestLabelsDoNotCollide: in a crowded session (notes a few hundred ms apart, long
// texts, a decision near the end of the axis) every label stays within the picture,
// no two labels of a row overlap, and a label beside its shape overlaps no shape of
// the band.
func TestLabelsDoNotCollide(t *testing.T) {
	long := strings.Repeat("the booking for tomorrow at 3pm was cancelled before it was committed ", 3)
	tl := &Timeline{Title: "crowded", EndMS: 20000, Closed: true}
	for i := range 12 {
		tl.Notes = append(tl.Notes, &Note{MS: int64(1000 + 300*i), JobID: "job-1", Text: fmt.Sprintf("%d %s", i, long), Deliver: "when_idle"})
	}
	tl.User = []*Utterance{
		{N: 1, StartMS: 500, EndMS: 900, Text: long, Intent: "other"},
		{N: 2, StartMS: 1000, EndMS: 1500, Text: "stop", Intent: "stop"},
		{N: 3, StartMS: 19000, EndMS: -1},
	}
	j := &Job{ID: "job-1", Tool: "book_slot", CallID: "c1", Calls: []string{"c1"}, SideEffect: true, OpenedMS: 1000, PreparedMS: 5000}
	j.Holds = []*Hold{{Utterance: 2, StartMS: 5000, EndMS: 19800}}
	j.Decisions = []*Decision{{MS: 19900, Decision: "cancel", Cause: "stop", Reason: long, RevokedMS: -1}}
	j.Outcomes = []Outcome{{MS: 19900, Outcome: "cancelled"}}
	tl.Jobs = []*Job{j}
	tl.Calls = []*Call{{ID: "call_" + strings.Repeat("x", 40), Tool: "book_slot", AtMS: 1000, Disposition: "execute", JobID: "job-1", WithdrawnMS: -1,
		Response: &Response{MS: 19900, Status: "cancelled"}}}
	v := layout(tl)
	for _, l := range v.Lanes {
		for _, r := range l.Rows {
			type box struct {
				x0, x1, y float64
				s         string
			}
			var boxes []box
			for _, it := range r.Items {
				for _, tx := range it.Texts {
					if tx.Class == "inside" || tx.Parts == nil {
						continue
					}
					w := width(tx.Parts)
					b := box{tx.X, tx.X + w, tx.Y, textString(tx)}
					if b.x0 < 0 || b.x1 > v.Width+0.5 {
						t.Errorf("lane %s: label %q at %.0f..%.0f leaves the picture (width %.0f)", l.Name, b.s, b.x0, b.x1, v.Width)
					}
					if b.y == bandTop+r.band()/2+4 {
						for _, busy := range r.busy {
							if b.x0 < busy[1] && b.x1 > busy[0] {
								t.Errorf("lane %s: label %q beside its shape overlaps a shape at %.0f..%.0f", l.Name, b.s, busy[0], busy[1])
							}
						}
					}
					for _, o := range boxes {
						if o.y == b.y && b.x0 < o.x1 && b.x1 > o.x0 {
							t.Errorf("lane %s: labels %q and %q overlap", l.Name, o.s, b.s)
						}
					}
					boxes = append(boxes, b)
				}
			}
		}
	}
	notes := v.Lanes[4].Rows[0]
	if n := (notes.H - bandTop - notes.band() - rowPad) / lineH; n > maxLines {
		t.Errorf("the notes take %.0f label lines, want at most %d", n, maxLines)
	}
	if len(v.Lanes) != 5 {
		t.Errorf("%d lanes, want user, model, calls, jobs, notes", len(v.Lanes))
	}
	if r := v.Lanes[2].Rows[0]; !strings.Contains(r.Label, "…") || len([]rune(r.Label)) > 24 {
		t.Errorf("a long call id is cut in the gutter: %q", r.Label)
	}
}

func textString(t *text) string {
	var b strings.Builder
	for _, p := range t.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
