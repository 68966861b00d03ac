package enginetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// speechKinds are the speech command's kinds.
var speechKinds = map[string]arbiter.SpeechKind{
	"user-start":          arbiter.UserActivityStart,
	"user-end":            arbiter.UserActivityEnd,
	"model-start":         arbiter.ModelOutputStart,
	"generation-complete": arbiter.ModelGenerationComplete,
	"turn-complete":       arbiter.ModelTurnComplete,
	"interrupted":         arbiter.Interrupted,
}

var behaviors = map[string]arbiter.Behavior{
	"blocking":     arbiter.Blocking,
	"non_blocking": arbiter.NonBlocking,
}

var outcomes = map[string]arbiter.Outcome{
	"committed": arbiter.Committed,
	"cancelled": arbiter.Cancelled,
	"failed":    arbiter.Failed,
	"result":    arbiter.Result,
	"unknown":   arbiter.Unknown,
}

// parseEvent reads an event command: its time and the engine event. A command or
// argument it does not know fails the test.
func parseEvent(t *testing.T, td *datadriven.TestData) (time.Time, arbiter.Event) {
	parse, ok := eventParsers[td.Cmd]
	if !ok {
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
	ev := parse(t, td)
	var n float64
	td.ScanArgs(t, "t", &n)
	return at(n), ev
}

// eventParsers read each event command's arguments and body into its engine event.
var eventParsers = map[string]func(t *testing.T, td *datadriven.TestData) arbiter.Event{
	"call":       parseCall,
	"speech":     parseSpeech,
	"transcript": parseTranscript,
	"withdraw":   parseWithdraw,
	"decide":     parseDecide,
	"complete":   parseComplete,
	"configure":  parseConfigure,
	"connect":    parseConnect,
	"progress":   parseProgress,
	"close":      parseClose,
	"tick":       parseTick,
}

func parseCall(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "observed", "epoch", "id", "tool", "behavior", "tool_choice", "business_key", "raw")
	rc := arbiter.RegisterCall{ObservedAt: observed(t, td), Epoch: strArg(t, td, "epoch")}
	if td.HasArg("raw") {
		rc.RawArgs = textBody(t, td) // what the agent could not parse
	} else {
		rc.Args = jsonBody(t, td)
	}
	if rc.Args == nil {
		rc.Args = map[string]any{} // what the gRPC edge makes of absent args
	}
	td.ScanArgs(t, "tool", &rc.Tool)
	td.MaybeScanArgs(t, "id", &rc.CallID)
	td.MaybeScanArgs(t, "business_key", &rc.BusinessKey)
	if b := strArg(t, td, "behavior"); b != "" {
		var ok bool
		if rc.Behavior, ok = behaviors[b]; !ok {
			td.Fatalf(t, "behavior: %q is not blocking or non_blocking", b)
		}
	}
	switch c := strArg(t, td, "tool_choice"); c {
	case "", "auto":
	case "none":
		rc.ToolChoiceNone = true
	default:
		td.Fatalf(t, "tool_choice: %q is not auto or none", c)
	}
	return rc
}

func parseSpeech(t *testing.T, td *datadriven.TestData) arbiter.Event {
	var kinds []string
	for _, a := range td.CmdArgs {
		if a.Key != "t" && a.Key != "observed" && a.Key != "epoch" && a.Key != "utterance" && a.Key != "event" {
			kinds = append(kinds, a.Key)
		}
	}
	k, ok := speechKinds[strings.Join(kinds, " ")]
	if !ok || len(kinds) != 1 {
		td.Fatalf(t, "speech: want one of user-start, user-end, model-start, generation-complete, turn-complete, interrupted; got %v", kinds)
	}
	return arbiter.Speech{Kind: k, ObservedAt: observed(t, td), Epoch: strArg(t, td, "epoch"), UtteranceID: strArg(t, td, "utterance"), EventID: strArg(t, td, "event")}
}

func parseTranscript(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "observed", "epoch", "utterance", "model", "interim", "event", "reading", "confidence", "source")
	tr := arbiter.Transcript{Model: td.HasArg("model"), Interim: td.HasArg("interim"), Text: textBody(t, td), ObservedAt: observed(t, td),
		Epoch: strArg(t, td, "epoch"), UtteranceID: strArg(t, td, "utterance"), EventID: strArg(t, td, "event")}
	if td.HasArg("reading") {
		r := &speech.AgentReading{Intent: speech.Intent(strArg(t, td, "reading")), Source: strArg(t, td, "source")}
		td.MaybeScanArgs(t, "confidence", &r.Confidence)
		tr.Reading = r
	}
	return tr
}

func parseWithdraw(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "observed", "ids", "reason", "event")
	a, ok := td.Arg("ids")
	if !ok {
		td.Fatalf(t, "withdraw: ids=(...) required")
	}
	return arbiter.ToolCallCancellation{CallIDs: a.Vals, ObservedAt: observed(t, td), Reason: arbiter.CancelReason(strArg(t, td, "reason")), EventID: strArg(t, td, "event")}
}

func parseDecide(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "job", "prepared", "live", "delivered")
	d := arbiter.Decide{Prepared: td.HasArg("prepared"), Live: td.HasArg("live"), Delivered: td.HasArg("delivered")}
	td.ScanArgs(t, "job", &d.JobID)
	return d
}

func parseComplete(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "job", "outcome", "pad")
	c := arbiter.Complete{}
	td.ScanArgs(t, "job", &c.JobID)
	o := strArg(t, td, "outcome")
	var ok bool
	if c.Outcome, ok = outcomes[o]; !ok {
		td.Fatalf(t, "outcome: %q is not committed, cancelled, failed, result or unknown", o)
	}
	pad := 0
	td.MaybeScanArgs(t, "pad", &pad)
	if c.Outcome == arbiter.Failed {
		c.Error = textBody(t, td) + strings.Repeat("x", pad)
	} else {
		c.Result = jsonBody(t, td)
		if pad > 0 {
			if c.Result == nil {
				c.Result = map[string]any{}
			}
			c.Result["pad"] = strings.Repeat("x", pad)
		}
	}
	return c
}

func parseConfigure(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "epoch", "language", "time_zone", "response_scheduling")
	c := arbiter.Configure{ResponseScheduling: td.HasArg("response_scheduling"), Epoch: strArg(t, td, "epoch")}
	td.MaybeScanArgs(t, "language", &c.Language)
	td.MaybeScanArgs(t, "time_zone", &c.TimeZone)
	return c
}

func parseConnect(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "id", "epoch")
	c := arbiter.Connect{Epoch: strArg(t, td, "epoch")}
	td.ScanArgs(t, "id", &c.ConnectionID)
	return c
}

func parseProgress(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t", "job", "event")
	p := arbiter.Progress{Result: jsonBody(t, td), EventID: strArg(t, td, "event")}
	td.ScanArgs(t, "job", &p.JobID)
	return p
}

func parseClose(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t")
	return arbiter.Close{}
}

func parseTick(t *testing.T, td *datadriven.TestData) arbiter.Event {
	checkArgs(t, td, "t")
	return arbiter.Tick{}
}

// at is the time n ms after Epoch.
func at(n float64) time.Time { return Epoch.Add(time.Duration(n * float64(time.Millisecond))) }

// observed is the observed=MS argument of an event the agent observes (when it saw
// the event, before it reached the engine at t=), zero when absent.
func observed(t *testing.T, td *datadriven.TestData) time.Time {
	if !td.HasArg("observed") {
		return time.Time{}
	}
	var n float64
	td.ScanArgs(t, "observed", &n)
	return at(n)
}

// checkArgs fails the test on an argument the command does not take.
func checkArgs(t *testing.T, td *datadriven.TestData, allowed ...string) {
	t.Helper()
	for _, a := range td.CmdArgs {
		ok := false
		for _, k := range allowed {
			ok = ok || a.Key == k
		}
		if !ok {
			td.Fatalf(t, "%s: unknown argument %q (it takes %s)", td.Cmd, a.Key, strings.Join(allowed, ", "))
		}
	}
}

func strArg(t *testing.T, td *datadriven.TestData, key string) string {
	var v string
	td.MaybeScanArgs(t, key, &v)
	return v
}

// jsonBody is the body as a JSON object, nil when there is none.
func jsonBody(t *testing.T, td *datadriven.TestData) map[string]any {
	if td.Input == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(td.Input), &m); err != nil {
		td.Fatalf(t, "%s: the body is not a JSON object: %v", td.Cmd, err)
	}
	return m
}

// textBody is the body as text: as written, or one JSON string when it starts with a
// double quote.
func textBody(t *testing.T, td *datadriven.TestData) string {
	if !strings.HasPrefix(td.Input, `"`) {
		return td.Input
	}
	var s string
	if err := json.Unmarshal([]byte(td.Input), &s); err != nil {
		td.Fatalf(t, "%s: the body starts with a quote but is not one JSON string: %v", td.Cmd, err)
	}
	return s
}
