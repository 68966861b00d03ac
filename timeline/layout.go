package timeline

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"cmp"
)

// Geometry of the picture, in CSS pixels.
const (
	svgWidth    = 1360.0 // fits a 1400 px window
	gutter      = 220.0  // lane names and row labels
	rightPad    = 16.0
	axisH       = 28.0
	bandTop     = 5.0  // from a row's top to its band
	bandH       = 14.0 // spans and markers
	lineH       = 15.0 // a label line under the band
	rowPad      = 5.0
	lanePad     = 5.0
	minPxPerSec = 40.0 // a longer session scrolls instead of squeezing
	maxLabel    = 110  // characters of a label before it is cut (the full text is in its title)
	maxLines    = 8    // label lines under a row's band; labels past them are left out (their shapes keep their titles, the tables list everything)
	minClip     = 260  // px: a label is cut to the room left before the end rather than moved left of its anchor, when that room is at least this
)

// view is what the template draws.
type view struct {
	Title, Source string
	Meta          []string
	Warnings      []string
	Width, Height float64
	X0, X1        float64
	// MSPerPx converts an x back to a time (the cursor's readout).
	MSPerPx float64
	StartMS int64
	Ticks   []tick
	Lanes   []*lane
	Session []*item
	PlotTop float64
	PlotBot float64
	Tables  tables
	Empty   bool
	Script  any
	Style   any
	CSP     string
	// RowLabelX places a row's label in the gutter.
	RowLabelX float64
}

type tick struct {
	X     float64
	Label string
}

type lane struct {
	Key, Name string
	Y, H      float64
	NameY     float64
	Shade     bool
	Rows      []*row
}

// row is one line of a lane: a band of shapes (spans, markers) at its top, labels
// beside the shapes on the band where there is room, else on lines under it. Its
// shapes are drawn relative to its top.
type row struct {
	Label, LabelTitle string
	Y, H              float64
	// Band is the band's height (0: bandH); LabelY is where the row label sits.
	Band   float64
	LabelY float64
	Items  []*item
	labels []*placed
	// busy are the x ranges the band's shapes take.
	busy [][2]float64
}

// item is one thing drawn (an utterance, a call, a decision...): a group with a title
// (its hover text) and data attributes naming what it is, so a reader, a script and
// a test can find it.
type item struct {
	Kind, Class, Title                    string
	Call, Job, Run, Utt, Decision, Status string
	Rects                                 []rect
	Lines                                 []segment
	Circles                               []circle
	Paths                                 []path
	Texts                                 []*text
}

type rect struct {
	X, Y, W, H float64
	Class      string
}

type segment struct {
	X1, Y1, X2, Y2 float64
	Class          string
}

type circle struct {
	X, Y, R float64
	Class   string
}

type path struct {
	D, Class string
}

type text struct {
	X, Y   float64
	Class  string
	Anchor string
	Parts  []part
}

type part struct{ Text, Class string }

// placed is a label waiting for its place: beside its shape on the band (at bx), or
// under the band (at x).
type placed struct {
	x, bx  float64
	beside bool
	parts  []part
	text   *text
}

// geometry maps times to x.
type geometry struct {
	startMS int64
	pxPerMS float64
	x0, x1  float64
}

func (g geometry) x(ms int64) float64 {
	if ms < g.startMS {
		ms = g.startMS
	}
	return g.x0 + float64(ms-g.startMS)*g.pxPerMS
}

// layout turns a timeline into what the template draws.
func layout(t *Timeline) *view {
	start := int64(0)
	for _, ms := range t.times() {
		start = min(start, ms)
	}
	end := max(t.EndMS, start+1000)
	span := float64(end-start) / 1000
	plotW := svgWidth - gutter - rightPad
	pps := max(plotW/span, minPxPerSec)
	g := geometry{startMS: start, pxPerMS: pps / 1000, x0: gutter}
	g.x1 = g.x(end)
	v := &view{
		Title: t.Title, Source: t.Source, Warnings: t.Warnings,
		Width: max(svgWidth, g.x1+rightPad), X0: g.x0, X1: g.x1, MSPerPx: 1 / g.pxPerMS, StartMS: start,
		PlotTop: axisH, RowLabelX: gutter - 8,
	}
	v.Meta = t.meta()
	v.Ticks = ticks(g, start, end)
	y := axisH
	add := func(key, name string, rows []*row) {
		if len(rows) == 0 {
			return
		}
		l := &lane{Key: key, Name: name, Y: y, Rows: rows, Shade: len(v.Lanes)%2 == 0}
		ry := y + lanePad
		nameW := width([]part{{Text: name, Class: "b"}})
		for i, r := range rows {
			room := gutter - 16
			if i == 0 {
				room -= nameW + 10
			}
			r.Label = middleCut(r.Label, int(room/6.63))
			r.place(g, ry)
			if i == 0 {
				l.NameY = ry + r.LabelY
			}
			ry += r.H
		}
		l.H = ry - y + lanePad
		y += l.H
		v.Lanes = append(v.Lanes, l)
	}
	add("user", "User speech", []*row{userRow(t, g)})
	add("model", "Model speech", []*row{modelRow(t, g)})
	add("calls", "Calls", callRows(t, g))
	add("jobs", "Jobs", jobRows(t, g))
	if len(t.Notes) > 0 {
		add("notes", "Notes", []*row{noteRow(t, g)})
	}
	add("runs", "Runs", runRows(t, g))
	v.PlotBot = y
	v.Session = sessionMarks(t, g, axisH, y)
	v.Height = y + 22
	v.Tables = makeTables(t)
	v.Empty = len(t.User) == 0 && len(t.Model) == 0 && len(t.Calls) == 0 && len(t.Jobs) == 0 && len(t.Notes) == 0
	return v
}

// times are the starts the picture draws (the axis starts at the earliest: an
// observed time may precede t_ms 0).
func (t *Timeline) times() []int64 {
	var ts []int64
	for _, u := range t.User {
		ts = append(ts, u.StartMS)
	}
	for _, c := range t.Calls {
		ts = append(ts, c.AtMS)
	}
	for _, m := range t.Model {
		ts = append(ts, m.StartMS)
	}
	return slices.DeleteFunc(ts, func(ms int64) bool { return ms == -1 })
}

// meta is the line under the title: when, how long, how much, how complete.
func (t *Timeline) meta() []string {
	var m []string
	if !t.CreatedAt.IsZero() {
		m = append(m, "started "+t.CreatedAt.UTC().Format("2006-01-02 15:04:05.000 MST"))
	}
	m = append(m, fmt.Sprintf("%.1f s", float64(t.EndMS)/1000))
	commits, cancels := 0, 0
	for _, j := range t.Jobs {
		if d := j.Decision(); d != nil {
			switch d.Decision {
			case "commit":
				commits++
			case "cancel":
				cancels++
			}
		}
	}
	m = append(m, plural(len(t.User), "utterance"), plural(len(t.Calls), "call"), plural(len(t.Jobs), "job"),
		fmt.Sprintf("%d committed, %d cancelled", commits, cancels), plural(len(t.Notes), "note"))
	switch {
	case t.Complete && t.Record:
		m = append(m, "history complete (recorded)")
	case t.Complete:
		m = append(m, "history complete")
	default:
		m = append(m, "history partial")
	}
	if !t.Closed {
		m = append(m, "not closed")
	}
	return m
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ticks are the axis's labelled seconds: the smallest step that leaves 60 px between
// labels.
func ticks(g geometry, start, end int64) []tick {
	steps := []int64{100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if float64(s)*g.pxPerMS >= 60 {
			step = s
			break
		}
	}
	var ts []tick
	first := int64(math.Ceil(float64(start)/float64(step))) * step
	for ms := first; ms <= end; ms += step {
		ts = append(ts, tick{X: g.x(ms), Label: seconds(ms, step)})
	}
	return ts
}

// seconds is ms as an axis label: "3 s", "1.5 s", "2 min".
func seconds(ms, step int64) string {
	switch {
	case step >= 60000 && ms%60000 == 0:
		return fmt.Sprintf("%d min", ms/60000)
	case step%1000 == 0:
		return fmt.Sprintf("%d s", ms/1000)
	}
	return fmt.Sprintf("%.1f s", float64(ms)/1000)
}

// at is a time for titles: "8.622 s".
func at(ms int64) string {
	if ms < 0 {
		return "(not in the history)"
	}
	return fmt.Sprintf("%.3f s", float64(ms)/1000)
}

func endAt(ms int64) string {
	if ms < 0 {
		return "(still open)"
	}
	return at(ms)
}

// band is the row's band height.
func (r *row) band() float64 { return cmp.Or(r.Band, bandH) }

// mid is the middle of the row's band.
func (r *row) mid() float64 { return bandTop + r.band()/2 }

// occupy notes that the band's shapes take x0..x1.
func (r *row) occupy(x0, x1 float64) { r.busy = append(r.busy, [2]float64{min(x0, x1), max(x0, x1)}) }

// label queues a label under the row's band at x.
func (r *row) label(it *item, x float64, parts ...part) {
	t := &text{}
	it.Texts = append(it.Texts, t)
	r.labels = append(r.labels, &placed{x: x, parts: clipParts(parts), text: t})
}

// beside queues a label on the band at bx, where it overlaps no shape and no other
// label; else under the band at x.
func (r *row) beside(it *item, bx, x float64, parts ...part) {
	t := &text{}
	it.Texts = append(it.Texts, t)
	r.labels = append(r.labels, &placed{x: x, bx: bx, beside: true, parts: clipParts(parts), text: t})
}

// place lays the row out at y: each label beside its shape when there is room, else
// on the first line under the band where it overlaps no other; a label that would
// pass the end of the axis is cut to the room left, or moved left when that room is
// small. The row is as tall as its lines.
func (r *row) place(g geometry, y float64) {
	r.Y = y
	band := slices.Clone(r.busy)
	var lines [][][2]float64
	// free reports whether x0..x1 keeps gap pixels from every range of iv.
	free := func(iv [][2]float64, x0, x1, gap float64) bool {
		for _, o := range iv {
			if x0 < o[1]+gap && x1 > o[0]-gap {
				return false
			}
		}
		return true
	}
	labels := slices.Clone(r.labels)
	slices.SortStableFunc(labels, func(a, b *placed) int { return cmp.Compare(a.x, b.x) })
	for _, p := range labels {
		if p.beside {
			parts := p.parts
			if room := g.x1 - p.bx; width(parts) > room && room >= minClip {
				parts = clipWidth(parts, room)
			}
			if w := width(parts); p.bx+w <= g.x1+1 && free(band, p.bx, p.bx+w, 2) {
				band = append(band, [2]float64{p.bx, p.bx + w})
				p.text.X, p.text.Y, p.text.Parts = p.bx, bandTop+r.band()/2+4, parts
				continue
			}
		}
		parts, x := p.parts, p.x
		if room := g.x1 - x; width(parts) > room {
			if room >= minClip {
				parts = clipWidth(parts, room)
			} else {
				x = max(g.x0+2, g.x1-width(parts))
				parts = clipWidth(parts, g.x1-x)
			}
		}
		w := width(parts)
		k := 0
		for k < len(lines) && !free(lines[k], x, x+w, 5) {
			k++
		}
		if k == maxLines {
			p.text.Parts = nil // drawn without its label
			continue
		}
		if k == len(lines) {
			lines = append(lines, nil)
		}
		lines[k] = append(lines[k], [2]float64{x, x + w})
		p.text.X, p.text.Y, p.text.Parts = x, bandTop+r.band()+float64(k)*lineH+lineH-3, parts
	}
	r.LabelY = bandTop + r.band()/2 + 4
	r.H = bandTop + r.band() + float64(len(lines))*lineH + rowPad
	if len(lines) == 0 {
		r.H += 3
	}
}

// inside draws a label inside a span of the band (top y, height h) when it fits; it
// reports whether it did.
func inside(it *item, x0, x1, y, h float64, s string) bool {
	w := width([]part{{Text: s}}) * 11 / 12
	if x1-x0 < w+8 {
		return false
	}
	it.Texts = append(it.Texts, &text{X: x0 + 4, Y: y + h/2 + 4, Class: "inside", Parts: []part{{Text: s}}})
	return true
}

// clipParts cuts a label to maxLabel characters in all, with an ellipsis.
func clipParts(parts []part) []part {
	n := 0
	out := make([]part, 0, len(parts))
	for _, p := range parts {
		c := utf8.RuneCountInString(p.Text)
		if n+c > maxLabel {
			rs := []rune(p.Text)
			out = append(out, part{Text: strings.TrimRight(string(rs[:max(maxLabel-n, 1)]), " ") + "…", Class: p.Class})
			return out
		}
		n += c
		out = append(out, p)
	}
	return out
}

// clipWidth cuts a label to w pixels, with an ellipsis.
func clipWidth(parts []part, w float64) []part {
	if width(parts) <= w {
		return parts
	}
	out := slices.Clone(parts)
	for len(out) > 0 {
		last := &out[len(out)-1]
		rs := []rune(strings.TrimSuffix(last.Text, "…"))
		if len(rs) <= 1 {
			out = out[:len(out)-1]
			continue
		}
		last.Text = strings.TrimRight(string(rs[:len(rs)-1]), " ") + "…"
		if width(out) <= w {
			return out
		}
	}
	return out
}

// asciiWidth is the advance of each printable ASCII character (32 to 126) at 12 px
// in DejaVu Sans, the sans-serif a Debian Chromium draws with (measured there):
// labels are laid out by it. Another font of about its size lays out close to it.
var asciiWidth = [95]float64{
	3.81, 4.81, 5.52, 10.05, 7.64, 11.40, 9.36, 3.30, 4.68, 4.68, 6.00, 10.05, 3.82, 4.33, 3.82, 4.04,
	7.64, 7.64, 7.64, 7.64, 7.64, 7.64, 7.64, 7.64, 7.64, 7.64, 4.04, 4.04, 10.05, 10.05, 10.05, 6.37,
	12.00, 8.51, 8.23, 8.38, 9.24, 7.58, 6.90, 9.30, 9.02, 3.54, 3.54, 7.87, 6.69, 10.35, 8.98, 9.45,
	7.24, 9.45, 8.34, 7.62, 7.14, 8.78, 8.21, 11.87, 8.22, 7.33, 8.22, 4.68, 4.04, 4.68, 10.05, 6.00,
	6.00, 7.35, 7.62, 6.60, 7.62, 7.38, 4.13, 7.62, 7.61, 3.33, 3.33, 6.95, 3.33, 11.69, 7.61, 7.34,
	7.62, 7.62, 4.74, 6.25, 4.71, 7.61, 7.10, 9.82, 7.10, 7.10, 6.30, 7.64, 4.04, 7.64, 10.05,
}

// width estimates a label's width at the page's 12 px sans-serif (bold 11% wider;
// 11 px monospace for ids).
func width(parts []part) float64 {
	w := 0.0
	for _, p := range parts {
		mono := p.Class == "id"
		weight := 1.0
		switch p.Class {
		case "", "reason", "muted", "id", "inside":
		default:
			weight = 1.11 // the other classes are bold
		}
		for _, c := range p.Text {
			switch {
			case mono:
				w += 6.63
			case c >= 32 && c < 127:
				w += asciiWidth[c-32] * weight
			case c == '“' || c == '”':
				w += 6.22 * weight
			case c == '’' || c == '‘':
				w += 3.82 * weight
			case c == '…' || c == '—' || c == '→':
				w += 12 * weight
			default:
				w += 7.6 * weight
			}
		}
	}
	return w
}

// middleCut shortens s to n characters by cutting its middle (ids differ at both
// ends).
func middleCut(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n || n < 5 {
		return s
	}
	head := (n - 1) / 2
	return string(rs[:head]) + "…" + string(rs[len(rs)-(n-1-head):])
}

func quote(s string) string { return "“" + s + "”" }
