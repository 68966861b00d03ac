// Command tracescript turns traces into engine goldens: it replays each trace (the
// trace format, docs/trace-format.md) in process as `arbiter replay` does, records the
// engine event behind every RPC the replay makes (the agent and its fake backend),
// and writes them as an arbiter/enginetest script, no-op polls left out, next to the
// engine's other goldens. The expected output is then written by the harness:
//
//	go run ./internal/tracescript testdata/scenarios/NAME.jsonl   # writes arbiter/testdata/scenarios/NAME.txt
//	go test ./arbiter -run TestGoldens/scenarios/NAME -rewrite
//
// A trace's replay must still match its golden (NAME.golden) first. With no argument
// it converts every trace under testdata/{scenarios,traces,workflows}. A developer's
// tool: it maps each request back to the engine event the server would build.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/enginetest"
	"github.com/voicearbiter/arbiter/arbiter/speech"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
)

type rec struct {
	at time.Time
	ev arbiter.Event
}

type recorder struct {
	arbiterv1.ArbiterServiceClient
	clock *replay.VirtualClock
	evs   []rec
}

func (r *recorder) add(ev arbiter.Event) { r.evs = append(r.evs, rec{r.clock.Now(), ev}) }

func (r *recorder) RegisterCall(ctx context.Context, req *arbiterv1.RegisterCallRequest, o ...grpc.CallOption) (*arbiterv1.RegisterCallResponse, error) {
	ev := arbiter.RegisterCall{CallID: req.GetCallId(), Tool: req.GetTool(), Args: req.GetArgs().AsMap(),
		ToolChoiceNone: req.GetToolChoice() == arbiterv1.ToolChoice_TOOL_CHOICE_NONE, BusinessKey: req.GetBusinessKey(),
		RawArgs: req.GetRawArgs()}
	switch req.GetBehavior() {
	case arbiterv1.Behavior_BEHAVIOR_BLOCKING:
		ev.Behavior = arbiter.Blocking
	case arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING:
		ev.Behavior = arbiter.NonBlocking
	}
	r.add(ev)
	return r.ArbiterServiceClient.RegisterCall(ctx, req, o...)
}

var kinds = map[arbiterv1.SpeechEvent]arbiter.SpeechKind{
	arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START:       arbiter.UserActivityStart,
	arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END:         arbiter.UserActivityEnd,
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START:        arbiter.ModelOutputStart,
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_GENERATION_COMPLETE: arbiter.ModelGenerationComplete,
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_TURN_COMPLETE:       arbiter.ModelTurnComplete,
	arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED:               arbiter.Interrupted,
}

func (r *recorder) ReportSpeech(ctx context.Context, req *arbiterv1.ReportSpeechRequest, o ...grpc.CallOption) (*arbiterv1.ReportSpeechResponse, error) {
	r.add(arbiter.Speech{Kind: kinds[req.GetEvent()], UtteranceID: req.GetUtteranceId()})
	return r.ArbiterServiceClient.ReportSpeech(ctx, req, o...)
}

func (r *recorder) ReportTranscript(ctx context.Context, req *arbiterv1.ReportTranscriptRequest, o ...grpc.CallOption) (*arbiterv1.ReportTranscriptResponse, error) {
	ev := arbiter.Transcript{Model: req.GetRole() == arbiterv1.Role_ROLE_MODEL, Text: req.GetText(), Interim: req.GetInterim(),
		UtteranceID: req.GetUtteranceId()}
	if rd := req.GetReading(); rd != nil {
		ev.Reading = &speech.AgentReading{Intent: speech.Intent(rd.GetIntent()), Confidence: rd.GetConfidence(), Source: rd.GetSource()}
	}
	r.add(ev)
	return r.ArbiterServiceClient.ReportTranscript(ctx, req, o...)
}

func (r *recorder) ReportToolCallCancellation(ctx context.Context, req *arbiterv1.ReportToolCallCancellationRequest, o ...grpc.CallOption) (*arbiterv1.ReportToolCallCancellationResponse, error) {
	ev := arbiter.ToolCallCancellation{CallIDs: req.GetCallIds()}
	if req.GetReason() == arbiterv1.CancellationReason_CANCELLATION_REASON_PROVIDER_TIMEOUT {
		ev.Reason = arbiter.CancelProviderTimeout
	}
	r.add(ev)
	return r.ArbiterServiceClient.ReportToolCallCancellation(ctx, req, o...)
}

func (r *recorder) Decide(ctx context.Context, req *arbiterv1.DecideRequest, o ...grpc.CallOption) (*arbiterv1.DecideResponse, error) {
	if req.GetWait().AsDuration() != 0 {
		panic("Decide with a wait")
	}
	r.add(arbiter.Decide{JobID: req.GetJobId(), Prepared: req.GetPrepared()})
	return r.ArbiterServiceClient.Decide(ctx, req, o...)
}

func (r *recorder) Complete(ctx context.Context, req *arbiterv1.CompleteRequest, o ...grpc.CallOption) (*arbiterv1.CompleteResponse, error) {
	var oc arbiter.Outcome
	switch req.GetOutcome() {
	case arbiterv1.Outcome_OUTCOME_COMMITTED:
		oc = arbiter.Committed
	case arbiterv1.Outcome_OUTCOME_CANCELLED:
		oc = arbiter.Cancelled
	case arbiterv1.Outcome_OUTCOME_FAILED:
		oc = arbiter.Failed
	case arbiterv1.Outcome_OUTCOME_RESULT:
		oc = arbiter.Result
	case arbiterv1.Outcome_OUTCOME_UNKNOWN:
		oc = arbiter.Unknown
	}
	var result map[string]any
	if req.GetResult() != nil {
		result = req.GetResult().AsMap()
	}
	r.add(arbiter.Complete{JobID: req.GetJobId(), Outcome: oc, Result: result, Error: req.GetError()})
	return r.ArbiterServiceClient.Complete(ctx, req, o...)
}

func (r *recorder) ConfigureSession(ctx context.Context, req *arbiterv1.ConfigureSessionRequest, o ...grpc.CallOption) (*arbiterv1.ConfigureSessionResponse, error) {
	r.add(arbiter.Configure{Language: req.GetLanguage(), TimeZone: req.GetTimeZone(), ResponseScheduling: req.GetResponseScheduling()})
	return r.ArbiterServiceClient.ConfigureSession(ctx, req, o...)
}

func (r *recorder) Poll(ctx context.Context, req *arbiterv1.PollRequest, o ...grpc.CallOption) (*arbiterv1.PollResponse, error) {
	if req.AfterSeq != nil {
		panic("Poll after_seq")
	}
	r.add(arbiter.Tick{})
	return r.ArbiterServiceClient.Poll(ctx, req, o...)
}

func (r *recorder) CloseSession(ctx context.Context, req *arbiterv1.CloseSessionRequest, o ...grpc.CallOption) (*arbiterv1.CloseSessionResponse, error) {
	r.add(arbiter.Close{})
	return r.ArbiterServiceClient.CloseSession(ctx, req, o...)
}

func (r *recorder) Connect(ctx context.Context, req *arbiterv1.ConnectRequest, o ...grpc.CallOption) (*arbiterv1.ConnectResponse, error) {
	r.add(arbiter.Connect{ConnectionID: req.GetConnectionId()})
	return r.ArbiterServiceClient.Connect(ctx, req, o...)
}

func (r *recorder) ReportProgress(ctx context.Context, req *arbiterv1.ReportProgressRequest, o ...grpc.CallOption) (*arbiterv1.ReportProgressResponse, error) {
	var result map[string]any
	if req.GetResult() != nil {
		result = req.GetResult().AsMap()
	}
	r.add(arbiter.Progress{JobID: req.GetJobId(), Result: result})
	return r.ArbiterServiceClient.ReportProgress(ctx, req, o...)
}

func (r *recorder) Watch(context.Context, *arbiterv1.WatchRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[arbiterv1.WatchResponse], error) {
	panic("Watch")
}

// jobNumber is a job id without its session's epoch ("job-1" for "job-1.xdts00"): the
// harness adds the epoch back, so scripts read the same whatever time they start at.
func jobNumber(id string) string {
	n, _, _ := strings.Cut(id, ".")
	return n
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func arg(v string) string {
	if v == "" || strings.ContainsAny(v, " \t=(),\n") {
		panic(fmt.Sprintf("argument %q cannot be written bare", v))
	}
	return v
}

func text(s string) string {
	if s != strings.TrimSpace(s) || strings.Contains(s, "\n") || strings.HasPrefix(s, `"`) {
		return compact(s)
	}
	return s
}

var speechNames = map[arbiter.SpeechKind]string{
	arbiter.UserActivityStart:       "user-start",
	arbiter.UserActivityEnd:         "user-end",
	arbiter.ModelOutputStart:        "model-start",
	arbiter.ModelGenerationComplete: "generation-complete",
	arbiter.ModelTurnComplete:       "turn-complete",
	arbiter.Interrupted:             "interrupted",
}

func command(at time.Time, ev arbiter.Event) string {
	t := "t=" + fmt.Sprint(at.Sub(replay.Epoch).Milliseconds())
	if at.Sub(replay.Epoch)%time.Millisecond != 0 {
		panic("sub-ms time")
	}
	var head []string
	body := ""
	switch ev := ev.(type) {
	case arbiter.RegisterCall:
		head = []string{"call", t}
		if ev.CallID != "" {
			head = append(head, "id="+arg(ev.CallID))
		}
		head = append(head, "tool="+arg(ev.Tool))
		switch ev.Behavior {
		case arbiter.Blocking:
			head = append(head, "behavior=blocking")
		case arbiter.NonBlocking:
			head = append(head, "behavior=non_blocking")
		}
		if ev.ToolChoiceNone {
			head = append(head, "tool_choice=none")
		}
		if ev.BusinessKey != "" {
			head = append(head, "business_key="+arg(ev.BusinessKey))
		}
		if ev.RawArgs != "" {
			head = append(head, "raw")
			body = text(ev.RawArgs)
		} else if len(ev.Args) > 0 {
			body = compact(ev.Args)
		}
	case arbiter.Speech:
		head = []string{"speech", t, speechNames[ev.Kind]}
		if ev.UtteranceID != "" {
			head = append(head, "utterance="+arg(ev.UtteranceID))
		}
	case arbiter.Transcript:
		head = []string{"transcript", t}
		if ev.Model {
			head = append(head, "model")
		}
		if ev.Interim {
			head = append(head, "interim")
		}
		if ev.UtteranceID != "" {
			head = append(head, "utterance="+arg(ev.UtteranceID))
		}
		if r := ev.Reading; r != nil {
			head = append(head, "reading="+string(r.Intent), fmt.Sprintf("confidence=%v", r.Confidence))
			if r.Source != "" {
				head = append(head, "source="+arg(r.Source))
			}
		}
		body = text(ev.Text)
	case arbiter.ToolCallCancellation:
		var ids []string
		for _, id := range ev.CallIDs {
			ids = append(ids, arg(id))
		}
		head = []string{"withdraw", t, "ids=(" + strings.Join(ids, ", ") + ")"}
		if ev.Reason != "" {
			head = append(head, "reason="+string(ev.Reason))
		}
	case arbiter.Decide:
		head = []string{"decide", t, "job=" + arg(jobNumber(ev.JobID))}
		if ev.Prepared {
			head = append(head, "prepared")
		}
	case arbiter.Complete:
		head = []string{"complete", t, "job=" + arg(jobNumber(ev.JobID)), "outcome=" + string(ev.Outcome)}
		if ev.Outcome == arbiter.Failed {
			if ev.Result != nil {
				panic("failed with a result")
			}
			body = text(ev.Error)
		} else {
			if ev.Error != "" {
				panic("error without failed")
			}
			if ev.Result != nil {
				body = compact(ev.Result)
			}
		}
	case arbiter.Configure:
		head = []string{"configure", t}
		if ev.Language != "" {
			head = append(head, "language="+arg(ev.Language))
		}
		if ev.TimeZone != "" {
			head = append(head, "time_zone="+arg(ev.TimeZone))
		}
		if ev.ResponseScheduling {
			head = append(head, "response_scheduling")
		}
	case arbiter.Connect:
		head = []string{"connect", t, "id=" + arg(ev.ConnectionID)}
	case arbiter.Progress:
		head = []string{"progress", t, "job=" + arg(jobNumber(ev.JobID))}
		if ev.Result != nil {
			body = compact(ev.Result)
		}
	case arbiter.Close:
		head = []string{"close", t}
	case arbiter.Tick:
		head = []string{"tick", t}
	default:
		panic(fmt.Sprintf("%T", ev))
	}
	s := strings.Join(head, " ") + "\n"
	if body != "" {
		s += body + "\n"
	}
	return s + "----\n\n"
}

func main() {
	root := "."
	dropped := map[string]int{}
	total, kept := 0, 0
	for _, dir := range []string{"scenarios", "traces", "workflows"} {
		paths, _ := filepath.Glob(filepath.Join(root, "testdata", dir, "*.jsonl"))
		if len(os.Args) > 1 {
			paths = nil
			for _, a := range os.Args[1:] {
				if filepath.Base(filepath.Dir(a)) == dir {
					paths = append(paths, a)
				}
			}
		}
		outDir := filepath.Join(root, "arbiter", "testdata", dir)
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			panic(err)
		}
		for _, path := range paths {
			name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			events, err := replay.ReadTraceFile(path, os.Stderr)
			if err != nil {
				panic(err)
			}
			policyPath := filepath.Join(root, "testdata", "scenarios", "policy.yaml")
			switch dir {
			case "traces":
				policyPath = filepath.Join(root, "testdata", "tools", "booking.yaml")
			case "workflows":
				policyPath = filepath.Join(root, "testdata", "workflows", "tools.yaml")
			}
			if len(events) > 0 && events[0].Policy != "" {
				policyPath = filepath.Join(filepath.Dir(path), events[0].Policy)
			}
			policy, err := policyfile.Load(policyPath)
			if err != nil {
				panic(err)
			}
			l, err := replay.NewLocal(policy, replay.Epoch)
			if err != nil {
				panic(err)
			}
			r := &recorder{ArbiterServiceClient: l.Client, clock: l.Clock}
			var out bytes.Buffer
			if _, err := replay.Run(context.Background(), r, l.Clock, events, replay.Options{SessionID: "rec-" + name, Start: replay.Epoch}, &out); err != nil {
				panic(fmt.Sprintf("%s: %v", path, err))
			}
			l.Close()
			golden, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".golden")
			if err != nil || !bytes.Equal(golden, out.Bytes()) {
				panic(fmt.Sprintf("%s: the recorded replay differs from its golden", path))
			}

			engine := &arbiter.Engine{Policy: policy}
			st := enginetest.Direct(nil, engine, arbiter.SessionKey{ID: name})
			var b strings.Builder
			// The trace's session_start line, for the reader.
			raw, _ := os.ReadFile(path)
			first := strings.SplitN(string(raw), "\n", 2)[0]
			var start map[string]any
			_ = json.Unmarshal([]byte(first), &start)
			fmt.Fprintf(&b, "# The engine events of the replay (the agent and its fake backend) of\n")
			fmt.Fprintf(&b, "# testdata/%s/%s.jsonl, no-op polls left out.\n", dir, name)
			if start["event"] == "session_start" {
				delete(start, "event")
				delete(start, "t_ms")
				delete(start, "policy")
				if c, ok := start["comment"].(string); ok {
					delete(start, "comment")
					b.WriteString(wrap(c))
				}
				if len(start) > 0 {
					fmt.Fprintf(&b, "# session_start: %s\n", compact(start))
				}
			}
			rel, _ := filepath.Rel(outDir, policyPath)
			fmt.Fprintf(&b, "\npolicy path=%s\n----\n\n", rel)
			for _, e := range r.evs {
				total++
				o, _, err := st.Step(e.at, e.ev, enginetest.Creates(e.ev))
				noop := err == nil && !o.Changed && o.Call == nil && o.Effects.Empty() && len(o.Decisions) == 0 &&
					o.Intent == "" && (o.Decision == nil || o.Decision.Decision == arbiter.Undecided)
				if noop {
					dropped[fmt.Sprintf("%T", e.ev)]++
					continue
				}
				if err != nil {
					panic(fmt.Sprintf("%s: %v", path, err))
				}
				kept++
				b.WriteString(command(e.at, e.ev))
			}
			s := strings.TrimSuffix(b.String(), "\n")
			if err := os.WriteFile(filepath.Join(outDir, name+".txt"), []byte(s), 0o644); err != nil {
				panic(err)
			}
		}
	}
	fmt.Printf("events recorded %d, kept %d, dropped %v\n", total, kept, dropped)
}

func wrap(text string) string {
	var b strings.Builder
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 88 {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	return b.String() + line + "\n"
}
