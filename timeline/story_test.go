package timeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
	"github.com/voicearbiter/arbiter/timeline"
)

// policies are the policies the goldens replay each testdata directory under.
var policies = map[string]string{
	"traces":    "../testdata/tools/booking.yaml",
	"scenarios": "../testdata/scenarios/policy.yaml",
	"workflows": "../testdata/workflows/tools.yaml",
}

// replayed replays a trace of testdata as `arbiter replay --html` does (an arbiter
// that records the session) and returns the replay's result, the session's history
// and its timeline, its axis in the trace's t_ms.
func replayed(t *testing.T, dir, path string) (*replay.Result, *arbiterv1.GetHistoryResponse, *timeline.Timeline) {
	t.Helper()
	events, err := replay.ReadTraceFile(path, nilWriter{})
	if err != nil {
		t.Fatal(err)
	}
	policyPath := policies[dir]
	if len(events) > 0 && events[0].Policy != "" {
		policyPath = filepath.Join(filepath.Dir(path), events[0].Policy)
	}
	policy, err := policyfile.Load(policyPath)
	if err != nil {
		t.Fatal(err)
	}
	res, h, err := replay.RunLocalRecorded(context.Background(), policy, events, replay.Options{SessionID: "timeline"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		t.Fatal("no session")
	}
	if !h.Complete {
		t.Fatalf("the recorded history is not complete: %d dropped", h.Dropped)
	}
	return res, h, timeline.FromHistory(h, timeline.Options{Origin: replay.StartOf(events)})
}

type nilWriter struct{}

func (nilWriter) Write(p []byte) (int, error) { return len(p), nil }

// replayStory is what a replay's output lines say, one line each, in a form the
// timeline can say too: calls (id, disposition, job, run), decisions (job, the call
// that opened it, decision, reason), what the backend did (commit, cancel and their
// outcomes), responses (final and interim, with payload), skips, notes and run
// states, each with its t_ms. A call id registered again (an idempotent retry: the
// same answer, and no input of the history) is its first registration.
func replayStory(t *testing.T, res *replay.Result) []string {
	var s []string
	calls := map[string]replay.Line{}
	for _, l := range res.Lines {
		if l.Out == "call" {
			if first, ok := calls[l.CallID]; ok {
				if first.Disposition != l.Disposition || first.JobID != l.JobID || first.RunID != l.RunID {
					t.Errorf("call %s registered again with another answer: %+v, then %+v", l.CallID, first, l)
				}
				continue
			}
			calls[l.CallID] = l
		}
		ms := int64(-1)
		if l.TMs != nil {
			ms = *l.TMs
		}
		switch l.Out {
		case "call":
			s = append(s, fmt.Sprintf("@%d call %s %s job=%s run=%s", ms, l.CallID, l.Disposition, l.JobID, l.RunID))
		case "decision":
			s = append(s, fmt.Sprintf("@%d decision %s opened-by=%s %s: %s", ms, l.JobID, l.CallID, l.Decision, l.Reason))
		case "commit":
			s = append(s, fmt.Sprintf("@%d outcome %s %s", ms, l.JobID, map[string]string{"": "committed", "failed": "failed", "unknown": "unknown"}[l.Outcome]))
		case "cancel":
			s = append(s, fmt.Sprintf("@%d outcome %s cancelled", ms, l.JobID))
		case "resolved":
			s = append(s, fmt.Sprintf("@%d outcome %s %s", ms, l.JobID, l.Outcome))
		case "response":
			kind := "response"
			if l.Final != nil && !*l.Final {
				kind = "interim"
			}
			s = append(s, fmt.Sprintf("@%d %s %s %s", ms, kind, l.CallID, compact(l.Payload)))
		case "skip":
			s = append(s, fmt.Sprintf("@%d skip %s %s", ms, l.CallID, l.Reason))
		case "note":
			s = append(s, fmt.Sprintf("@%d note job=%s run=%s %s: %s", ms, l.JobID, l.RunID, l.Deliver, l.Text))
		case "run":
			s = append(s, fmt.Sprintf("@%d run %s %s call=%s job=%s: %s", ms, l.RunID, l.State, l.CallID, l.JobID, l.Reason))
		}
	}
	slices.Sort(s)
	return s
}

// timelineStory is what the timeline says, in replayStory's form. Read-only jobs'
// results are the replay's responses, not outcomes of a commit.
func timelineStory(tl *timeline.Timeline) []string {
	var s []string
	for _, c := range tl.Calls {
		s = append(s, fmt.Sprintf("@%d call %s %s job=%s run=%s", c.AtMS, c.ID, c.Disposition, c.JobID, c.RunID))
		for _, r := range c.Interim {
			s = append(s, fmt.Sprintf("@%d interim %s %s", r.MS, c.ID, compact(r.Payload)))
		}
		if r := c.Response; r != nil {
			s = append(s, fmt.Sprintf("@%d response %s %s", r.MS, c.ID, compact(r.Payload)))
		}
		if k := c.Skip; k != nil {
			s = append(s, fmt.Sprintf("@%d skip %s %s", k.MS, c.ID, k.Reason))
		}
	}
	for _, j := range tl.Jobs {
		if d := j.Decision(); d != nil {
			s = append(s, fmt.Sprintf("@%d decision %s opened-by=%s %s: %s", d.MS, j.ID, j.CallID, d.Decision, d.Reason))
		}
		for _, o := range j.Outcomes {
			if j.SideEffect {
				s = append(s, fmt.Sprintf("@%d outcome %s %s", o.MS, j.ID, o.Outcome))
			}
		}
	}
	for _, n := range tl.Notes {
		s = append(s, fmt.Sprintf("@%d note job=%s run=%s %s: %s", n.MS, n.JobID, n.RunID, n.Deliver, n.Text))
	}
	for _, r := range tl.Runs {
		for _, st := range r.States {
			s = append(s, fmt.Sprintf("@%d run %s %s call=%s job=%s: %s", st.MS, r.ID, st.State, st.CallID, st.JobID, st.Reason))
		}
	}
	slices.Sort(s)
	return s
}

func compact(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTimelineTellsTheReplaysStory: for every session of testdata (the recorded
// traces, the scenarios, the workflows), the timeline `arbiter replay --html` draws
// says what the replay's output lines say: the same call ids with the same
// dispositions and jobs, the same decisions with the same reasons, the same commits
// and cancels, responses, skips, notes and run states, at the same t_ms (the
// virtual clock's: content, not a clock); and the page drawn from it shows each
// call id, each decision with its reason, each skip and each note.
func TestTimelineTellsTheReplaysStory(t *testing.T) {
	n := 0
	for _, dir := range []string{"traces", "scenarios", "workflows"} {
		paths, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*.jsonl"))
		for _, path := range paths {
			n++
			name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			t.Run(dir+"/"+name, func(t *testing.T) {
				res, _, tl := replayed(t, dir, path)
				want, got := replayStory(t, res), timelineStory(tl)
				if !slices.Equal(got, want) {
					t.Errorf("the timeline tells another story than the replay:\n%s", diffLines(want, got))
				}
				page, err := tl.HTML()
				if err != nil {
					t.Fatal(err)
				}
				checkPage(t, parse(t, page), res)
			})
		}
	}
	if n < 40 {
		t.Fatalf("only %d traces found", n)
	}
}

// diffLines shows the lines only one side has.
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "  replay only:   %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "  timeline only: %s\n", l)
		}
	}
	return b.String()
}

// checkPage checks that the page shows what the replay said: a group for each call
// id (with its skip), a decision diamond for each decision, with its reason in its
// hover title and beside it, and in the decisions table; each note's text.
func checkPage(t *testing.T, doc *html.Node, res *replay.Result) {
	t.Helper()
	groups := findAll(doc, func(n *html.Node) bool { return n.Data == "g" && attr(n, "data-kind") != "" })
	find := func(kind string, match func(*html.Node) bool) *html.Node {
		for _, g := range groups {
			if attr(g, "data-kind") == kind && match(g) {
				return g
			}
		}
		return nil
	}
	rows := findAll(doc, func(n *html.Node) bool { return n.Data == "tr" })
	for _, l := range res.Lines {
		switch l.Out {
		case "call":
			if find("call", func(g *html.Node) bool { return attr(g, "data-call") == l.CallID }) == nil {
				t.Errorf("no call %s in the picture", l.CallID)
			}
			if !slices.ContainsFunc(rows, func(r *html.Node) bool { return attr(r, "data-call") == l.CallID }) {
				t.Errorf("no call %s in the calls table", l.CallID)
			}
		case "skip":
			g := find("call", func(g *html.Node) bool { return attr(g, "data-call") == l.CallID })
			if g == nil || attr(g, "data-status") != "skip" || !strings.Contains(title(g), l.Reason) {
				t.Errorf("call %s is not drawn skipped (%s)", l.CallID, l.Reason)
			}
		case "decision":
			g := find("decision", func(g *html.Node) bool {
				return attr(g, "data-job") == l.JobID && attr(g, "data-decision") == l.Decision && attr(g, "data-call") == l.CallID
			})
			if g == nil {
				t.Errorf("no %s decision on %s in the picture", l.Decision, l.JobID)
				continue
			}
			if !strings.Contains(title(g), "reason: "+l.Reason) {
				t.Errorf("decision on %s: hover title %q lacks the reason %q", l.JobID, title(g), l.Reason)
			}
			label := strings.TrimSuffix(textOf(findAll(g, func(n *html.Node) bool { return n.Data == "text" })...), "…")
			if full := l.Decision + ": " + l.Reason; !strings.HasPrefix(full, label) || len(label) < len(l.Decision)+20 && len(label) < len(full) {
				t.Errorf("decision on %s: label %q, want (a prefix of) %q", l.JobID, label, full)
			}
			if !slices.ContainsFunc(rows, func(r *html.Node) bool {
				return attr(r, "data-job") == l.JobID && strings.Contains(textOf(r), l.Reason)
			}) {
				t.Errorf("decision on %s: not in the decisions table with its reason", l.JobID)
			}
		case "note":
			if find("note", func(g *html.Node) bool { return strings.Contains(title(g), l.Text) }) == nil {
				t.Errorf("no note %q in the picture", l.Text)
			}
		}
	}
}

func parse(t *testing.T, page []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// title is the text of a group's own <title>.
func title(g *html.Node) string {
	for c := g.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "title" {
			return textOf(c)
		}
	}
	return ""
}

func textOf(ns ...*html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range ns {
		walk(n)
	}
	return b.String()
}
