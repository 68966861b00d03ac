package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// userRow is the user's utterances: voice activity spans, transcript arrivals, and
// the final transcript with its intent under each.
func userRow(t *Timeline, g geometry) *row {
	r := &row{}
	for _, u := range t.User {
		it := &item{Kind: "utterance", Class: "utt", Utt: fmt.Sprint(u.N)}
		x0, x1 := g.x(u.StartMS), g.x(t.EndMS)
		if u.StartMS < 0 {
			x0 = g.x0
		}
		cls := "span user"
		if u.EndMS >= 0 {
			x1 = g.x(u.EndMS)
		} else {
			cls += " open"
		}
		x1 = max(x1, x0+3)
		it.Rects = append(it.Rects, rect{X: x0, Y: bandTop, W: x1 - x0, H: bandH, Class: cls})
		r.occupy(x0, x1)
		inside(it, x0, x1, bandTop, bandH, fmt.Sprintf("U%d", u.N))
		tt := []string{fmt.Sprintf("user utterance U%d: voice activity %s → %s", u.N, at(u.StartMS), endAt(u.EndMS))}
		if u.ProviderID != "" {
			tt = append(tt, "provider id "+u.ProviderID)
		}
		for _, p := range u.Pieces {
			kind := "transcript"
			if p.Interim {
				kind = "interim transcript"
			}
			line := fmt.Sprintf("%s at %s: %s", kind, at(p.MS), quote(p.Text))
			if p.Intent != "" {
				line += " → intent " + p.Intent
			}
			tt = append(tt, line)
			if !p.Interim {
				x := g.x(p.MS)
				it.Circles = append(it.Circles, circle{X: x, Y: r.mid(), R: 3.5, Class: "piece"})
				r.occupy(x-4, x+4)
			}
		}
		it.Title = strings.Join(tt, "\n")
		parts := []part{{Text: fmt.Sprintf("U%d ", u.N), Class: "b"}}
		if u.Intent != "" {
			parts = append(parts, part{Text: u.Intent, Class: "intent-" + u.Intent}, part{Text: " "})
		}
		if u.Text != "" {
			parts = append(parts, part{Text: quote(u.Text)})
		} else {
			parts = append(parts, part{Text: "(no final transcript)", Class: "muted"})
		}
		r.label(it, x0, parts...)
		r.Items = append(r.Items, it)
	}
	return r
}

// modelRow is the model's output: spans from audio start to turn end (cut short by
// `interrupted`), their transcription, and the marks no span holds.
func modelRow(t *Timeline, g geometry) *row {
	r := &row{}
	for i, m := range t.Model {
		it := &item{Kind: "model-turn", Class: "turn"}
		x0, x1 := g.x(m.StartMS), g.x(t.EndMS)
		cls := "span model"
		if m.EndMS >= 0 {
			x1 = g.x(m.EndMS)
		} else {
			cls += " open"
		}
		x1 = max(x1, x0+3)
		it.Rects = append(it.Rects, rect{X: x0, Y: bandTop, W: x1 - x0, H: bandH, Class: cls})
		r.occupy(x0, x1)
		tt := []string{fmt.Sprintf("model output %d: %s → %s", i+1, at(m.StartMS), endAt(m.EndMS))}
		if m.GenerationMS >= 0 {
			gx := g.x(m.GenerationMS)
			it.Lines = append(it.Lines, segment{X1: gx, Y1: bandTop, X2: gx, Y2: bandTop + bandH, Class: "gen"})
			tt = append(tt, "generation complete at "+at(m.GenerationMS))
		}
		if m.Interrupted {
			tt = append(tt, "cut by interrupted")
		}
		if m.Text != "" {
			tt = append(tt, "transcript: "+quote(m.Text))
			r.label(it, x0, part{Text: quote(strings.TrimSpace(m.Text))})
		}
		it.Title = strings.Join(tt, "\n")
		r.Items = append(r.Items, it)
	}
	// Interrupted marks last: on top of a turn's end at the same instant.
	marks := slices.Clone(t.Marks)
	last := func(m Mark) int {
		if m.Kind == "interrupted" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(marks, func(a, b Mark) int { return cmp.Compare(last(a), last(b)) })
	for _, mk := range marks {
		x := g.x(mk.MS)
		it := &item{Kind: mk.Kind, Class: "mark " + mk.Kind, Title: mk.Label + " at " + at(mk.MS)}
		switch mk.Kind {
		case "interrupted":
			it.Paths = append(it.Paths, path{D: fmt.Sprintf("M%.1f %.1fl-5 -9h10z", x, bandTop+bandH), Class: "interrupt"})
			r.occupy(x-5, x+5)
			r.beside(it, x+7, x-4, part{Text: "interrupted", Class: "muted"})
		default:
			it.Circles = append(it.Circles, circle{X: x, Y: r.mid(), R: 2.5, Class: "turnend"})
			r.occupy(x-3, x+3)
		}
		r.Items = append(r.Items, it)
	}
	return r
}

// callRows are one row per call id: its registration (what RegisterCall said), and
// its end, a function response or a skip, with what it was beside the end; an id
// still unanswered at the end is drawn to the end of the axis.
func callRows(t *Timeline, g geometry) []*row {
	calls := slices.Clone(t.Calls)
	slices.SortStableFunc(calls, func(a, b *Call) int { return cmp.Compare(a.AtMS, b.AtMS) })
	var rows []*row
	for _, c := range calls {
		r := &row{Label: c.ID, LabelTitle: "call " + c.ID}
		it := &item{Kind: "call", Class: "call", Call: c.ID, Job: c.JobID, Run: c.RunID}
		x0 := g.x0
		if c.AtMS >= 0 {
			x0 = g.x(c.AtMS)
		}
		endMS, endCls := t.EndMS, "pending unanswered"
		switch {
		case c.Response != nil:
			endMS, endCls = c.Response.MS, "pending"
		case c.Skip != nil:
			endMS, endCls = c.Skip.MS, "pending dead"
		}
		x1 := g.x(endMS)
		it.Lines = append(it.Lines, segment{X1: x0, Y1: r.mid(), X2: x1, Y2: r.mid(), Class: endCls})
		it.Circles = append(it.Circles, circle{X: x0, Y: r.mid(), R: 5, Class: "reg disp-" + c.Disposition})
		r.occupy(x0-6, x1+6)
		tt := []string{fmt.Sprintf("call %s: %s", c.ID, c.Tool)}
		if c.Minted {
			tt = append(tt, "(id minted by the arbiter: the agent gave none)")
		}
		if c.Args != nil {
			tt = append(tt, "args "+compactJSON(c.Args))
		}
		reg := fmt.Sprintf("registered at %s: %s", at(c.AtMS), cmp.Or(c.Disposition, "?"))
		if c.JobID != "" {
			reg += ", job " + c.JobID
		}
		if c.RunID != "" {
			reg += ", run " + c.RunID
		}
		if c.DuplicateOf != "" {
			reg += ", duplicate of " + c.DuplicateOf
		}
		if c.Behavior != "" {
			reg += " (" + c.Behavior + ")"
		}
		tt = append(tt, reg)
		for _, ir := range c.Interim {
			x := g.x(ir.MS)
			it.Lines = append(it.Lines, segment{X1: x, Y1: bandTop + 2, X2: x, Y2: bandTop + bandH - 2, Class: "interim"})
			tt = append(tt, fmt.Sprintf("interim response at %s: %s", at(ir.MS), compactJSON(ir.Payload)))
		}
		if c.WithdrawnMS >= 0 {
			tt = append(tt, "withdrawn by the model server at "+at(c.WithdrawnMS))
		}
		var end []part
		switch {
		case c.Response != nil:
			st := statusClass(c.Response.Status)
			it.Status = c.Response.Status
			it.Rects = append(it.Rects, rect{X: x1 - 5, Y: r.mid() - 5, W: 10, H: 10, Class: "answer " + st})
			tt = append(tt, fmt.Sprintf("function response at %s: %s", at(c.Response.MS), compactJSON(c.Response.Payload)))
			end = []part{{Text: "response "}, {Text: cmp.Or(c.Response.Status, "sent"), Class: st}}
		case c.Skip != nil:
			it.Status = "skip"
			it.Paths = append(it.Paths, path{D: cross(x1, r.mid(), 5), Class: "skip"})
			tt = append(tt, fmt.Sprintf("skipped at %s: %s: never answer it", at(c.Skip.MS), c.Skip.Reason))
			end = []part{{Text: "skip", Class: "skip-word"}, {Text: " " + c.Skip.Reason}}
		default:
			it.Status = "unanswered"
			tt = append(tt, "unanswered at the end")
			end = []part{{Text: "unanswered", Class: "bad"}}
		}
		what := []part{{Text: c.Tool + " "}, {Text: cmp.Or(c.Disposition, "?"), Class: "disp-" + c.Disposition}}
		switch {
		case c.DuplicateOf != "":
			what = append(what, part{Text: " of "}, part{Text: c.DuplicateOf, Class: "id"})
		case c.JobID != "":
			what = append(what, part{Text: " → "}, part{Text: c.JobID, Class: "id"})
		case c.RunID != "":
			what = append(what, part{Text: " → "}, part{Text: c.RunID, Class: "id"})
		}
		// One line beside the end when there is room: how it ended, what it was.
		r.beside(it, x1+10, x0-5, append(append(end, part{Text: " · "}), what...)...)
		it.Title = strings.Join(tt, "\n")
		r.Items = append(r.Items, it)
		rows = append(rows, r)
	}
	return rows
}

// cross is an X centred on x, y.
func cross(x, y, s float64) string {
	return fmt.Sprintf("M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f", x-s, y-s, x+s, y+s, x-s, y+s, x+s, y-s)
}

// diamond is a diamond centred on x, y.
func diamond(x, y, s float64) string {
	return fmt.Sprintf("M%.1f %.1fl%.1f %.1fl%.1f %.1fl%.1f %.1fz", x, y-s, s, s, -s, s, -s, -s)
}

// statusClass colours a response's status: done, not done, not known, asking.
func statusClass(s string) string {
	switch s {
	case "committed", "ok":
		return "st-good"
	case "cancelled", "rejected", "failed":
		return "st-bad"
	case "needs_confirmation", "needs_input", "in_progress", "unclear":
		return "st-ask"
	}
	return "st-warn"
}

// Job rows have two tracks: holds on top, the prepare (or a read-only run) under
// them; decisions and outcomes span both.
const (
	jobBand  = 26.0
	holdTop  = bandTop
	trackH   = 12.0
	prepTop  = bandTop + 14
	jobMid   = bandTop + jobBand/2
	diamondR = 8.0
)

// jobRows are one row per job: a side-effecting job's prepare, its holds (by which
// utterance, or abandonment), each decision with its reason beside it, and the
// outcomes the agent reported; a read-only job's run to its result.
func jobRows(t *Timeline, g geometry) []*row {
	var rows []*row
	for _, j := range t.Jobs {
		r := &row{Label: j.ID, LabelTitle: "job " + j.ID + " (" + j.Tool + ")", Band: jobBand}
		open := g.x0
		if j.OpenedMS >= 0 {
			open = g.x(j.OpenedMS)
		}
		r.Items = append(r.Items, runItem(t, g, r, j, open))
		for _, h := range j.Holds {
			r.Items = append(r.Items, holdItem(t, g, r, j, h))
		}
		// Outcomes under the decisions: a decision and the outcome it asked for come
		// at the same instant, and the decision is what to hover.
		for _, o := range j.Outcomes {
			if !j.SideEffect && o.Outcome == "result" {
				continue // the read-only run's bar ends there
			}
			oi := &item{Kind: "outcome", Class: "outcome", Job: j.ID, Status: o.Outcome}
			x := g.x(o.MS)
			oi.Rects = append(oi.Rects, rect{X: x - 4.5, Y: jobMid - 4.5, W: 9, H: 9, Class: "oc oc-" + o.Outcome})
			r.occupy(x-5, x+5)
			tt := fmt.Sprintf("%s: the agent reported %s at %s", j.ID, strings.ToUpper(o.Outcome), at(o.MS))
			if o.Error != "" {
				tt += "\nerror: " + o.Error
			}
			if o.Result != nil {
				tt += "\nresult: " + compactJSON(o.Result)
			}
			oi.Title = tt
			// The outcome a decision asked for at once needs no label of its own.
			if d := decisionAt(j, o.MS); d == nil || !follows(d.Decision, o.Outcome) {
				r.beside(oi, x+8, x-4, part{Text: o.Outcome, Class: "oc-word oc-" + o.Outcome})
			}
			r.Items = append(r.Items, oi)
		}
		for _, d := range j.Decisions {
			di := &item{Kind: "decision", Class: "decision", Job: j.ID, Call: j.CallID, Decision: d.Decision}
			x := g.x(d.MS)
			cls := "dec " + d.Decision
			tt := fmt.Sprintf("decision on %s at %s: %s", j.ID, at(d.MS), strings.ToUpper(d.Decision))
			if d.Cause != "" {
				tt += " (" + d.Cause + ")"
			}
			tt += "\nreason: " + d.Reason
			word := d.Decision
			if d.RevokedMS >= 0 {
				cls += " revoked"
				tt += "\nwithdrawn at " + at(d.RevokedMS) + ": an event the agent observed before it arrived after it"
				word += " (withdrawn)"
			}
			di.Paths = append(di.Paths, path{D: diamond(x, jobMid, diamondR), Class: cls})
			r.occupy(x-diamondR, x+diamondR)
			di.Title = tt
			r.beside(di, x+diamondR+4, x-diamondR, part{Text: word, Class: "w-" + d.Decision}, part{Text: ": " + d.Reason, Class: "reason"})
			r.Items = append(r.Items, di)
		}
		for _, p := range j.ProgressMS {
			x := g.x(p)
			r.Items = append(r.Items, &item{Kind: "progress", Class: "progress", Job: j.ID, Title: "progress reported at " + at(p),
				Lines: []segment{{X1: x, Y1: prepTop - 1, X2: x, Y2: prepTop + trackH + 1, Class: "interim"}}})
		}
		rows = append(rows, r)
	}
	return rows
}

// runItem is a job's lower track: a side-effecting job's prepare (to the Decide that
// said it finished, else dashed to its decision), a read-only job's run to its
// result.
func runItem(t *Timeline, g geometry, r *row, j *Job, open float64) *item {
	it := &item{Kind: "prepare", Class: "prepare", Job: j.ID}
	first := int64(-1)
	if len(j.Decisions) > 0 {
		first = j.Decisions[0].MS
	}
	if !j.SideEffect {
		end := t.EndMS
		title := fmt.Sprintf("job %s (%s, read-only): runs from %s", j.ID, j.Tool, at(j.OpenedMS))
		if len(j.Outcomes) > 0 {
			end = j.Outcomes[0].MS
			title += fmt.Sprintf("; %s at %s", j.Outcomes[0].Outcome, at(end))
		} else {
			title += "; no result"
		}
		x1 := max(g.x(end), open+2)
		it.Kind, it.Class, it.Title = "run", "readonly", title
		it.Rects = append(it.Rects, rect{X: open, Y: prepTop, W: x1 - open, H: trackH, Class: "bar ro"})
		r.occupy(open, x1)
		if !inside(it, open, x1, prepTop, trackH, "read-only") && len(j.Outcomes) > 0 {
			r.beside(it, x1+4, open, part{Text: j.Outcomes[0].Outcome, Class: "oc-word oc-" + j.Outcomes[0].Outcome})
		}
		return it
	}
	end, cls := j.PreparedMS, "bar prep"
	title := fmt.Sprintf("job %s (%s): prepare from %s to %s", j.ID, j.Tool, at(j.OpenedMS), at(j.PreparedMS))
	if j.PreparedMS >= 0 && j.OpenedMS >= 0 {
		title += fmt.Sprintf(" (%.1f s)", float64(j.PreparedMS-j.OpenedMS)/1000)
	}
	if end < 0 {
		end, cls = cmp.Or(max(first, 0), t.EndMS), "bar prep unfinished"
		title = fmt.Sprintf("job %s (%s): prepare from %s, never reported finished", j.ID, j.Tool, at(j.OpenedMS))
		if first >= 0 {
			title += " (decided at " + at(first) + ")"
		}
	}
	x1 := max(g.x(end), open+2)
	it.Rects = append(it.Rects, rect{X: open, Y: prepTop, W: x1 - open, H: trackH, Class: cls})
	if j.PreparedMS >= 0 {
		it.Lines = append(it.Lines, segment{X1: x1, Y1: prepTop - 1, X2: x1, Y2: prepTop + trackH + 1, Class: "prepared"})
	}
	r.occupy(open, x1)
	it.Title = title
	inside(it, open, x1, prepTop, trackH, "prepare") // else its title says it
	return it
}

// holdItem is one hold on a job's commit, on the upper track.
func holdItem(t *Timeline, g geometry, r *row, j *Job, h *Hold) *item {
	it := &item{Kind: "hold", Class: "hold", Job: j.ID, Utt: fmt.Sprint(h.Utterance)}
	hs, he := g.x0, g.x(t.EndMS)
	if h.StartMS >= 0 {
		hs = g.x(h.StartMS)
	}
	if h.EndMS >= 0 {
		he = g.x(h.EndMS)
	}
	he = max(he, hs+3)
	by := fmt.Sprintf("held by U%d", h.Utterance)
	why := fmt.Sprintf("its commit waits until utterance U%d has ended and its final transcript came", h.Utterance)
	if h.Abandoned {
		by, it.Utt = "held: abandoned", ""
		why = "every call id of the job is dead (the model server dropped it): it waits for a re-issue"
	}
	it.Rects = append(it.Rects, rect{X: hs, Y: holdTop, W: he - hs, H: trackH, Class: "span holdspan"})
	r.occupy(hs, he)
	it.Title = fmt.Sprintf("job %s %s: %s → %s\n%s", j.ID, by, at(h.StartMS), endAt(h.EndMS), why)
	if !inside(it, hs, he, holdTop, trackH, by) {
		r.label(it, hs, part{Text: by, Class: "hold-word"})
	}
	return it
}

// decisionAt is the job's decision made within 50 ms before ms.
func decisionAt(j *Job, ms int64) *Decision {
	for _, d := range j.Decisions {
		if d.RevokedMS < 0 && d.MS <= ms && ms-d.MS <= 50 {
			return d
		}
	}
	return nil
}

func follows(decision, outcome string) bool {
	return decision == "commit" && outcome == "committed" || decision == "cancel" && outcome == "cancelled"
}

// noteRow is the status notes: when each was handed out, how it is to be sent, its
// text.
func noteRow(t *Timeline, g geometry) *row {
	r := &row{}
	for _, n := range t.Notes {
		x := g.x(n.MS)
		it := &item{Kind: "note", Class: "note", Job: n.JobID, Run: n.RunID, Call: n.CallID, Status: n.Deliver}
		it.Paths = append(it.Paths, path{D: fmt.Sprintf("M%.1f %.1fh12v9h-7l-3 3v-3h-2z", x-2, bandTop+1), Class: "bubble deliver-" + n.Deliver})
		r.occupy(x-2, x+10)
		about := cmp.Or(n.JobID, n.RunID, "the session")
		tt := fmt.Sprintf("note about %s at %s, deliver %s", about, at(n.MS), strings.ReplaceAll(n.Deliver, "_", " "))
		if n.Via != "" {
			tt += " as a " + strings.ReplaceAll(n.Via, "_", " ")
		}
		if n.CallID != "" {
			tt += " (in the response of " + n.CallID + ")"
		}
		if n.Why != "" {
			tt += "\nwhy: " + n.Why
		}
		it.Title = tt + "\n" + quote(n.Text)
		r.beside(it, x+14, x-2, part{Text: strings.ReplaceAll(n.Deliver, "_", " "), Class: "deliver"}, part{Text: " " + quote(n.Text)})
		r.Items = append(r.Items, it)
	}
	return r
}

// runRows are one row per confirm-then-act run: its state changes.
func runRows(t *Timeline, g geometry) []*row {
	var rows []*row
	for _, run := range t.Runs {
		r := &row{Label: run.ID, LabelTitle: "run " + run.ID + " (" + run.Tool + ")"}
		if n := len(run.States); n > 1 {
			x0, x1 := g.x(run.States[0].MS), g.x(run.States[n-1].MS)
			r.Items = append(r.Items, &item{Kind: "run-span", Class: "runspan", Run: run.ID,
				Title: fmt.Sprintf("run %s (%s): %s → %s", run.ID, run.Tool, at(run.States[0].MS), at(run.States[n-1].MS)),
				Lines: []segment{{X1: x0, Y1: r.mid(), X2: x1, Y2: r.mid(), Class: "runline"}}})
			r.occupy(x0, x1)
		}
		for _, s := range run.States {
			x := g.x(s.MS)
			it := &item{Kind: "run-state", Class: "runstate", Run: run.ID, Call: s.CallID, Job: s.JobID, Status: s.State}
			it.Circles = append(it.Circles, circle{X: x, Y: r.mid(), R: 5, Class: "rs rs-" + s.State})
			r.occupy(x-6, x+6)
			tt := fmt.Sprintf("run %s (%s) %s at %s", run.ID, run.Tool, s.State, at(s.MS))
			if s.CallID != "" {
				tt += " by call " + s.CallID
			}
			if s.JobID != "" {
				tt += ", job " + s.JobID
			}
			if s.Reason != "" {
				tt += "\n" + s.Reason
			}
			it.Title = tt
			parts := []part{{Text: s.State, Class: "rs-word rs-" + s.State}}
			if s.Reason != "" {
				parts = append(parts, part{Text: ": " + s.Reason, Class: "reason"})
			}
			r.beside(it, x+8, x-5, parts...)
			r.Items = append(r.Items, it)
		}
		rows = append(rows, r)
	}
	return rows
}

// sessionMarks are vertical lines across every lane: configurations, connections,
// the close.
func sessionMarks(t *Timeline, g geometry, top, bot float64) []*item {
	var items []*item
	for _, m := range t.Session {
		x := g.x(m.MS)
		it := &item{Kind: m.Kind, Class: "session " + m.Kind, Title: m.Label + " at " + at(m.MS)}
		it.Lines = append(it.Lines, segment{X1: x, Y1: top, X2: x, Y2: bot, Class: "vline"})
		anchor := "middle"
		switch {
		case x+60 > g.x1:
			anchor = "end"
		case x-60 < g.x0:
			anchor = "start"
		}
		it.Texts = append(it.Texts, &text{X: x, Y: bot + 14, Class: "vlabel", Anchor: anchor, Parts: []part{{Text: m.Label}}})
		items = append(items, it)
	}
	return items
}
