package guard

import (
	"errors"
	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/internal/realtime"
	"github.com/voicearbiter/arbiter/internal/realtime/gemini"
)

// Gemini Live's half of the rule. Messages:
//
//	server                          reported                      and then
//	voiceActivity START / END       Speech user activity          forwarded
//	modelTurn audio                 Speech model output (1st)      forwarded at once, never held
//	(interim)inputTranscription     Transcript (user)              forwarded (kept back if the guard asked for it)
//	outputTranscription             Transcript (model)             forwarded
//	interrupted, generationComplete, turnComplete  Speech         forwarded; turnComplete/interrupted: notes waiting for idle go
//	toolCall.functionCalls          RegisterCall each              held until registered; the calls the agent is not
//	                                                               to run (duplicate, rejected, run prompt) removed
//	toolCallCancellation            ToolCallCancellation           forwarded
//	sessionResumptionUpdate         -                              newHandle carries the arbiter session (handle.go)
//	agent
//	setup                           Connect, ConfigureSession      the handle restored; input transcription asked
//	                                                               for when missing (Config.AddTranscription)
//	toolResponse.functionResponses  ToolAnswer each                the arbiter's response in its place, or dropped
//	realtimeInput, clientContent    -                              forwarded (audio at once)
//
// Every non-audio message keeps its order behind a held one.
type geminiRule struct {
	setup      gemini.Setup
	hideInput  bool // the guard asked for input transcription: the agent does not get it
	setupSeen  bool
	binaryResp bool // the server's frames are binary: the guard's own go the same way to the agent
}

func newGemini() *geminiRule { return &geminiRule{} }

func (g *geminiRule) behavior(name string) arbiter.Behavior {
	switch g.setup.Behaviors[name] {
	case "BLOCKING":
		return arbiter.Blocking
	case "NON_BLOCKING":
		return arbiter.NonBlocking
	}
	return ""
}

func (g *geminiRule) fromServer(r *Rule, f Frame) {
	g.binaryResp = f.Binary
	m, err := gemini.ParseServer(f.Data)
	if err != nil {
		r.badFrame(Server, f, err)
		r.pass(Agent, f, true)
		return
	}
	if m.AudioOnly {
		r.modelOutput()
		r.through(Agent, f)
		return
	}
	switch m.VoiceActivity {
	case "ACTIVITY_START":
		r.report(arbiter.Speech{Kind: arbiter.UserActivityStart, ObservedAt: r.now}, "")
	case "ACTIVITY_END":
		r.report(arbiter.Speech{Kind: arbiter.UserActivityEnd, ObservedAt: r.now}, "")
	}
	if m.HasInput && m.InputText != "" {
		r.report(arbiter.Transcript{Text: m.InputText, Interim: !m.InputFinal, ObservedAt: r.now}, "")
	}
	if m.ModelAudio {
		r.modelOutput()
	}
	if m.OutputText != "" {
		r.busy = true
		r.report(arbiter.Transcript{Model: true, Text: m.OutputText, ObservedAt: r.now}, "")
	}
	if m.Interrupted {
		r.report(arbiter.Speech{Kind: arbiter.Interrupted, ObservedAt: r.now}, "")
	}
	if m.GenerationComplete {
		r.report(arbiter.Speech{Kind: arbiter.ModelGenerationComplete, ObservedAt: r.now}, "")
	}
	if m.TurnComplete {
		r.report(arbiter.Speech{Kind: arbiter.ModelTurnComplete, ObservedAt: r.now}, "")
	}
	if len(m.Cancelled) > 0 {
		r.report(arbiter.ToolCallCancellation{CallIDs: m.Cancelled, ObservedAt: r.now}, "")
	}
	out := f
	if m.NewHandle != "" {
		if b, err := gemini.RewriteHandle(f.Data, r.handleFor(m.NewHandle)); err == nil {
			out.Data = b
		}
	}
	if m.HasInput && g.hideInput {
		b, ok := gemini.WithoutInput(out.Data)
		if !ok {
			g.afterTurn(r, m)
			return
		}
		out.Data = b
	}
	if len(m.Calls) > 0 {
		h := &held{calls: map[string]bool{}}
		repeated := false
		for _, c := range m.Calls {
			if c.ID == "" {
				// The arbiter would mint an id the model never gave: the agent's
				// answer could not be matched. Such a call passes unguarded.
				r.logf(true, "function call without an id: passed to the agent unguarded", "tool", c.Name)
				continue
			}
			if !r.serverCall(c.ID, c.Name, c.Args, c.RawArgs, g.setup.ToolChoiceNone, h) {
				repeated = true
			}
		}
		if repeated {
			if b, ok := gemini.WithoutCalls(out.Data, func(id string) bool { return r.calls[id] != nil && !h.calls[id] }); ok {
				out.Data = b
			} else {
				g.afterTurn(r, m)
				return
			}
		}
		if len(h.calls) > 0 {
			h.out = []Frame{out}
			r.hold(Agent, h)
			g.afterTurn(r, m)
			return
		}
	}
	r.pass(Agent, out, true)
	g.afterTurn(r, m)
}

// afterTurn: a finished or interrupted turn leaves the model idle.
func (g *geminiRule) afterTurn(r *Rule, m gemini.ServerMessage) {
	if m.TurnComplete || m.Interrupted {
		r.idle()
	}
}

// released: the frame's calls are registered; those the agent is not to run are
// taken out.
func (g *geminiRule) released(r *Rule, h *held, f Frame) []Frame {
	b, ok := gemini.WithoutCalls(f.Data, func(id string) bool { c := r.calls[id]; return c != nil && !r.agentRuns(id) })
	if !ok {
		return nil
	}
	f.Data = b
	return []Frame{f}
}

func (g *geminiRule) fromAgent(r *Rule, f Frame) {
	m, err := gemini.ParseClient(f.Data)
	if err != nil {
		r.badFrame(Agent, f, err)
		r.pass(Server, f, true)
		return
	}
	switch m.Kind {
	case gemini.ClientOther:
		r.through(Server, f) // audio and the rest of realtimeInput: never held
	case gemini.ClientSetup:
		g.setupSeen = true
		g.setup = m.Setup
		r.setup(m.Setup.Handle, m.Setup.Resumption, m.Setup.Language)
		out := f
		if real, ok := r.realHandle(m.Setup.Handle); ok && real != m.Setup.Handle {
			out.Data = gemini.SetHandle(m.Obj, real)
			m.Obj, _ = realtime.DecodeObject(out.Data)
		}
		if r.cfg.AddTranscription && !m.Setup.InputTranscription {
			g.hideInput = true
			out.Data = gemini.AskInputTranscription(m.Obj)
			r.logf(false, "asked the server for input transcription (the agent did not): stops can be read")
		}
		r.pass(Server, out, true)
	case gemini.ClientToolResponse:
		if len(m.Responses) == 0 {
			// Answers nothing: said, and left to the server to judge.
			r.badFrame(Agent, f, errors.New("a toolResponse without function responses"))
			r.pass(Server, f, true)
			return
		}
		for _, fr := range m.Responses {
			one := Frame{Data: gemini.ToolResponse(fr), Binary: f.Binary}
			if fr.WillContinue {
				// An interim answer of the agent's: it never answers the call.
				if c := r.calls[fr.ID]; c != nil && !c.sent && !c.dead && c.toAgent {
					r.pass(Server, one, true)
				} else {
					r.count("dropped agent answer", "interim answer for a call not live", fr.ID)
				}
				continue
			}
			h := &held{out: []Frame{one}}
			r.agentAnswer(fr.ID, realtime.PlainObj(fr.Response), h)
		}
	default:
		r.pass(Server, f, true)
	}
}

func (g *geminiRule) respond(r *Rule, c *callState, payload map[string]any, h *held) {
	fr := gemini.FunctionResponse{ID: c.id, Name: c.name, Response: payload}
	if c.sched != "" && g.behavior(c.name) == arbiter.NonBlocking {
		fr.Scheduling = scheduling(c.sched)
	}
	f := Frame{Data: gemini.ToolResponse(fr)}
	if h != nil {
		h.out, h.ready = []Frame{f}, true
		return
	}
	r.pass(Server, f, true)
}

func (g *geminiRule) interim(r *Rule, c *callState, payload map[string]any) {
	r.pass(Server, Frame{Data: gemini.ToolResponse(gemini.FunctionResponse{ID: c.id, Name: c.name, Response: payload, WillContinue: true})}, true)
}

func (g *geminiRule) note(r *Rule, text string) {
	r.pass(Server, Frame{Data: gemini.UserTurn(text)}, true)
}

func (g *geminiRule) dropAnswer(*Rule, *held) {} // Gemini echoes nothing

// scheduling spells a function response's scheduling as the Gemini API does (the
// arbiter's names are the API's).
func scheduling(s arbiter.Scheduling) string { return string(s) }
