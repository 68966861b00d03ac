package timeline

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
)

//go:embed page.html.tmpl
var pageSource string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"px": func(f float64) string { return fmt.Sprintf("%.1f", f) },
}).Parse(pageSource))

// ContentSecurityPolicy is the page's policy: nothing is fetched, the one inline
// style sheet and the one inline script run (by their hashes), nothing else does.
// The page carries it in a <meta> element; a server sends it as a header too, with
// frame-ancestors 'none' (which a <meta> element cannot carry).
var ContentSecurityPolicy = fmt.Sprintf("default-src 'none'; style-src '%s'; script-src '%s'; img-src data:; base-uri 'none'; form-action 'none'",
	hash(pageCSS), hash(pageJS))

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Render writes t as one self-contained HTML page.
func Render(w io.Writer, t *Timeline) error {
	v := layout(t)
	v.Style, v.Script, v.CSP = template.CSS(pageCSS), template.JS(pageJS), ContentSecurityPolicy
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		return fmt.Errorf("timeline: render: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// HTML is t rendered (Render).
func (t *Timeline) HTML() ([]byte, error) {
	var b bytes.Buffer
	err := Render(&b, t)
	return b.Bytes(), err
}

// tables are the picture's story in text, under it: what to search, copy and quote.
type tables struct {
	Utterances []uttRow
	Calls      []callRow
	Decisions  []decisionRow
	Notes      []noteLine
}

type uttRow struct{ N, From, To, Intent, IntentClass, Text string }

type callRow struct {
	ID, Tool, At, Disposition, DispClass, Job, End, EndClass, EndAt string
}

type decisionRow struct {
	At, Job, Call, Decision, Cause, Reason, Holds, Outcome string
}

type noteLine struct{ At, About, Job, Deliver, Text, Why string }

func makeTables(t *Timeline) tables {
	var tb tables
	for _, u := range t.User {
		tb.Utterances = append(tb.Utterances, uttRow{N: fmt.Sprintf("U%d", u.N), From: at(u.StartMS), To: endAt(u.EndMS),
			Intent: u.Intent, IntentClass: "intent-" + u.Intent, Text: u.Text})
	}
	calls := slices.Clone(t.Calls)
	slices.SortStableFunc(calls, func(a, b *Call) int { return int(a.AtMS - b.AtMS) })
	for _, c := range calls {
		r := callRow{ID: c.ID, Tool: c.Tool, At: at(c.AtMS), Disposition: c.Disposition, DispClass: "disp-" + c.Disposition, Job: c.JobID}
		if c.RunID != "" {
			r.Job = strings.TrimSpace(r.Job + " run " + c.RunID)
		}
		if c.DuplicateOf != "" {
			r.Disposition += " of " + c.DuplicateOf
		}
		switch {
		case c.Response != nil:
			r.End, r.EndClass, r.EndAt = "response: "+c.Response.Status, statusClass(c.Response.Status), at(c.Response.MS)
		case c.Skip != nil:
			r.End, r.EndClass, r.EndAt = "skip: "+c.Skip.Reason, "skip-word", at(c.Skip.MS)
		default:
			r.End, r.EndClass = "unanswered", "bad"
		}
		tb.Calls = append(tb.Calls, r)
	}
	for _, j := range t.Jobs {
		var holds []string
		for _, h := range j.Holds {
			by := fmt.Sprintf("by U%d", h.Utterance)
			if h.Abandoned {
				by = "abandoned"
			}
			holds = append(holds, fmt.Sprintf("%s %s–%s", by, short(h.StartMS), short(h.EndMS)))
		}
		var outs []string
		for _, o := range j.Outcomes {
			outs = append(outs, fmt.Sprintf("%s at %s", o.Outcome, short(o.MS)))
		}
		for _, d := range j.Decisions {
			dec := d.Decision
			if d.RevokedMS >= 0 {
				dec += " (withdrawn at " + short(d.RevokedMS) + ")"
			}
			tb.Decisions = append(tb.Decisions, decisionRow{At: at(d.MS), Job: j.ID, Call: j.CallID, Decision: dec, Cause: d.Cause,
				Reason: d.Reason, Holds: strings.Join(holds, "; "), Outcome: strings.Join(outs, "; ")})
		}
	}
	for _, n := range t.Notes {
		tb.Notes = append(tb.Notes, noteLine{At: at(n.MS), About: strings.TrimSpace(n.JobID + " " + n.RunID), Job: n.JobID,
			Deliver: strings.ReplaceAll(n.Deliver, "_", " "), Text: n.Text, Why: n.Why})
	}
	return tb
}

// short is ms in seconds for a table: "8.62 s"; "…" when not known.
func short(ms int64) string {
	if ms < 0 {
		return "…"
	}
	return fmt.Sprintf("%.2f s", float64(ms)/1000)
}

// compactJSON is v as one line of JSON, for titles.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
