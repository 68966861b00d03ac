package timeline_test

import (
	"crypto/sha256"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/timeline"
)

// TestPageIsSelfContained: the page fetches nothing (no src, no href, no url(), no
// @import: no CDN, no web font), and its one inline style sheet and one inline script
// are those its content security policy allows by hash, as rendered (a policy that
// did not match would leave the page unstyled, or its script blocked).
func TestPageIsSelfContained(t *testing.T) {
	_, _, tl := replayed(t, "traces", filepath.Join("..", "testdata", "traces", "C_on_run2.jsonl"))
	page, err := tl.HTML()
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, page)
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "background":
				t.Errorf("<%s %s=%q>: the page must fetch nothing", n.Data, a.Key, a.Val)
			}
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s>: inline handlers do not run under the policy", n.Data, a.Key)
			}
		}
	}
	for _, bad := range []string{"url(", "@import", "https:", "//cdn", "@font-face"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	csp := ""
	for _, m := range findAll(doc, func(n *html.Node) bool { return n.Data == "meta" && attr(n, "http-equiv") == "Content-Security-Policy" }) {
		csp = attr(m, "content")
	}
	if csp != timeline.ContentSecurityPolicy || !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("the page's policy is %q, want %q", csp, timeline.ContentSecurityPolicy)
	}
	for _, tag := range []string{"style", "script"} {
		els := findAll(doc, func(n *html.Node) bool { return n.Data == tag })
		if len(els) != 1 {
			t.Fatalf("%d <%s> elements, want 1", len(els), tag)
		}
		sum := sha256.Sum256([]byte(textOf(els[0])))
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, tag+"-src "+h) {
			t.Errorf("the inline <%s> (%s) is not the one the policy allows: %s", tag, h, csp)
		}
	}
}

// TestPartialHistory: a history that lost its beginning (a session that does not
// record) still draws what it has: a response whose call's registration was dropped,
// a hold whose beginning was dropped, the decision, an utterance and a model turn
// still open; and the page says what is missing.
func TestPartialHistory(t *testing.T) {
	payload, _ := structpb.NewStruct(map[string]any{"status": "cancelled", "executed": false})
	h := &arbiterv1.GetHistoryResponse{
		SessionId: "partial", MaxBytes: 1024, Bytes: 1000, Dropped: 7, FirstSeq: 3,
		Entries: []*arbiterv1.HistoryEntry{
			{TMs: 61000, Entry: &arbiterv1.HistoryEntry_Speech{Speech: &arbiterv1.HistorySpeech{Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, Utterance: 4}}},
			{TMs: 62000, Entry: &arbiterv1.HistoryEntry_Transcript{Transcript: &arbiterv1.HistoryTranscript{Role: arbiterv1.Role_ROLE_USER, Text: "no, stop", Utterance: 4, Intent: "stop"}}},
			{TMs: 62000, Entry: &arbiterv1.HistoryEntry_Decision{Decision: &arbiterv1.HistoryDecision{JobId: "job-2", Decision: arbiterv1.Decision_DECISION_CANCEL, Cause: "stop", Reason: "stop intent in user speech: \"no, stop\""}}},
			{TMs: 62000, Entry: &arbiterv1.HistoryEntry_Hold{Hold: &arbiterv1.HistoryHold{JobId: "job-2", Utterance: 3, End: true}}},
			{TMs: 62001, Seq: 3, Entry: &arbiterv1.HistoryEntry_Response{Response: &arbiterv1.FunctionResponse{CallId: "c9", Name: "book_slot", JobId: "job-2", Payload: payload, Seq: 3}}},
			{TMs: 63000, Seq: 3, Entry: &arbiterv1.HistoryEntry_Speech{Speech: &arbiterv1.HistorySpeech{Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START}}},
		},
	}
	tl := timeline.FromHistory(h, timeline.Options{})
	if len(tl.Calls) != 1 || tl.Calls[0].ID != "c9" || tl.Calls[0].AtMS != -1 || tl.Calls[0].Response == nil || tl.Calls[0].Tool != "book_slot" {
		t.Errorf("calls: %+v", tl.Calls)
	}
	if len(tl.Jobs) != 1 || len(tl.Jobs[0].Holds) != 1 || tl.Jobs[0].Holds[0].StartMS != -1 || tl.Jobs[0].Holds[0].EndMS != 62000 || tl.Jobs[0].Decision() == nil {
		t.Errorf("jobs: %+v", tl.Jobs)
	}
	if len(tl.User) != 1 || tl.User[0].EndMS != -1 || tl.User[0].Intent != "stop" || len(tl.Model) != 1 || tl.Model[0].EndMS != -1 {
		t.Errorf("speech: %+v %+v", tl.User, tl.Model)
	}
	if tl.Closed || tl.EndMS != 63000 {
		t.Errorf("end %d closed %v", tl.EndMS, tl.Closed)
	}
	page, err := tl.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"7 older entries were dropped", "before effect 3", `data-call="c9"`, "history partial", "not closed", "held by U3"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
