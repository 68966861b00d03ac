// Package enginetest runs the engine's behaviour goldens: datadriven scripts
// (github.com/cockroachdb/datadriven, in the manner of etcd raft's interaction tests)
// that give a session's inputs as explicit engine events at explicit times, each
// followed by the Output the engine must produce. Package arbiter's own tests run them
// on the engine alone (Direct); store/storetest runs the same files through
// arbiter.Service on every store. `go test -rewrite` regenerates the expected output.
//
// # Commands
//
// Every file starts with a policy; every other command is one engine event at t, in
// milliseconds after Epoch. The events the agent observes (call, speech, transcript,
// withdraw) may say observed=MS: when the agent saw it, earlier than t when its
// delivery was delayed (a store outage, a retry). Those that may start a session
// (call, speech, transcript, configure, connect) may name epoch=EPOCH; speech and
// transcript may name the model server's utterance=ID; speech, transcript, withdraw
// and progress may carry the agent's event id, event=ID. A JSON body is an object; a text body is taken as written
// (trimmed), or, when it starts with a double quote, as one JSON string (for text whose
// leading or trailing spaces matter, such as a model transcript piece).
//
//	policy path=FILE                      the tool policy (policyfile), FILE relative to the script;
//	policy                                or the policy YAML as the body
//	call t=MS tool=NAME [id=ID] [behavior=blocking|non_blocking] [tool_choice=none] [business_key=KEY] [raw]
//	                                      RegisterCall; body: the args (JSON, default {}), or
//	                                      with raw the argument text the agent could not parse
//	speech t=MS KIND [event=ID]           Speech; KIND is user-start, user-end, model-start,
//	                                      generation-complete, turn-complete or interrupted
//	transcript t=MS [model] [interim] [event=ID] [reading=INTENT confidence=C [source=S]]
//	                                      Transcript; body: the text; reading: the agent's own
//	                                      reading (stop, go_ahead, amend, other, unclear)
//	withdraw t=MS ids=(ID, ...) [reason=provider_timeout] [event=ID]
//	                                      ToolCallCancellation
//	decide t=MS job=JOB [prepared] [live] [delivered]
//	                                      Decide; live: a live agent's (a late commit is
//	                                      withheld from it first: arbiter.Decide.Live);
//	                                      delivered: one that declares the delivery
//	                                      contract (not withheld: arbiter.Decide.Delivered)
//	complete t=MS job=JOB outcome=OUTCOME [pad=N]
//	                                      Complete (committed, cancelled, failed, result, unknown);
//	                                      body: the result (JSON), or for failed the error (text);
//	                                      pad=N adds N x's (the result's field "pad", or the error's end)
//	configure t=MS [language=TAG] [time_zone=ZONE] [response_scheduling]
//	                                      Configure
//	connect t=MS id=CONNECTION            Connect
//	progress t=MS job=JOB [event=ID]      Progress; body: the interim result (JSON)
//	close t=MS                            Close
//	tick t=MS                             Tick
//
// # Output
//
// The first step that finds the session prints its epoch ("session: epoch k3f9a2");
// job ids are printed without it ("job-1" for "job-1.k3f9a2"), and a command's job id
// without one gets it. One line per item, in this order: "repeat" for an event whose
// id was seen, what RegisterCall said, the decisions made during the step, Decide's
// answer, the effects in log order (by seq), the intent of a final user transcript,
// the session's next timer, and "unchanged" when the step changed nothing (the
// Service then stores nothing). A step with none of these prints "ok". A
// time is printed (t=MS) only where it differs from the command's; an effect handed
// out by an earlier step and returned again (an idempotent repeat) says "again".
//
//	repeat                                the event's id was seen: nothing else happened
//	call: ID DISPOSITION [job=JOB] [of=ID] [run=RUN] [key=KEY] [exec=TOOL ARGS] [repeat]
//	connect: new|resumed|lost epoch=EPOCH
//	revoked: JOB: ...                     a commit withdrawn by a late event (Output.Revoked)
//	decided: JOB commit|cancel [cause=CAUSE] [t=MS]: REASON
//	decision: JOB pending|commit|cancel [cause=CAUSE] [t=MS]: REASON
//	response #SEQ [again] [t=MS]: CALL [job=JOB] [interim] PAYLOAD
//	skip #SEQ [again] [t=MS]: CALL [job=JOB] REASON
//	run #SEQ [again] [t=MS]: RUN STATE tool=TOOL [call=ID] [job=JOB][: REASON]
//	note #SEQ [again] [t=MS]: [job=JOB] [run=RUN] deliver=now|when_idle via=user_turn|function_response [call=ID scheduling=S]: TEXT
//	intent: stop|amend|other|unknown
//	timer: t=MS
//	error: KIND: MESSAGE
//
// PAYLOAD and ARGS are compact JSON with sorted keys. Effects are what the agent is
// handed; an effect's "why" (a note's reasoning for its delivery) is left out.
package enginetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
)

// Epoch is a script's t=0: the morning the recorded sessions were made (replay.Epoch),
// so "tomorrow 3pm" resolves to the same minute in every run.
var Epoch = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// Stepper applies engine events to one session as arbiter.Service.Apply does: load
// the session (or, with create set, start a new one when there is none; otherwise
// NotFound), step it, and store it only when Output.Changed is set. It returns the
// output and the session as stepped (nil on error). A Stepper is used by one
// goroutine.
type Stepper interface {
	Step(now time.Time, ev arbiter.Event, create bool) (arbiter.Output, *arbiter.Session, error)
}

// NewStepper returns a Stepper for the session key of one script, running engine (whose
// Policy is the script's). It registers any cleanup with t.
type NewStepper func(t *testing.T, engine *arbiter.Engine, key arbiter.SessionKey) Stepper

// Run runs every script (*.txt) under dir, each in a subtest named by its path, on a
// fresh Stepper. It fails when dir holds no script.
func Run(t *testing.T, dir string, newStepper NewStepper) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".txt") {
			n++
		}
		return err
	})
	if err != nil || n == 0 {
		t.Fatalf("no scripts (*.txt) under %s: %v", dir, err)
	}
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		if !strings.HasSuffix(path, ".txt") {
			return
		}
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		s := &script{path: path, key: arbiter.SessionKey{ID: name}, newStepper: newStepper}
		datadriven.RunTest(t, path, s.do)
	})
}

// Direct is the NewStepper of the engine alone: the session lives as its encoded
// record (arbiter.EncodeSession, as every store keeps it), and each step decodes it,
// steps it and stores it again only when the step changed it, exactly as
// arbiter.Service does on a Store.
func Direct(_ *testing.T, engine *arbiter.Engine, key arbiter.SessionKey) Stepper {
	return &direct{engine: engine, key: key}
}

type direct struct {
	engine  *arbiter.Engine
	key     arbiter.SessionKey
	record  []byte
	version uint64
}

func (d *direct) Step(now time.Time, ev arbiter.Event, create bool) (arbiter.Output, *arbiter.Session, error) {
	var s *arbiter.Session
	if d.record == nil {
		if !create {
			// The stores' NotFound, word for word.
			return arbiter.Output{}, nil, arbiter.Fieldf(arbiter.NotFound, "session_id", "session %q not found", d.key.ID)
		}
		s = arbiter.NewSession(d.key, now)
	} else {
		var err error
		if s, err = arbiter.DecodeSession(d.record); err != nil {
			return arbiter.Output{}, nil, err
		}
		s.Version = d.version
	}
	out, err := d.engine.Step(s, now, ev)
	if err != nil {
		return out, nil, err
	}
	if out.Changed {
		d.version++
		s.Version = d.version
		b, err := arbiter.EncodeSession(s)
		if err != nil {
			return arbiter.Output{}, nil, err
		}
		d.record = b
	}
	return out, s, nil
}

// Creates reports whether ev may start a session that does not exist yet: the events
// of the RPCs that create one (RegisterCall, ReportSpeech, ReportTranscript,
// ConfigureSession, Connect); the others are NotFound on a missing session.
func Creates(ev arbiter.Event) bool {
	switch ev.(type) {
	case arbiter.RegisterCall, arbiter.Speech, arbiter.Transcript, arbiter.Configure, arbiter.Connect:
		return true
	}
	return false
}

// script is one file's state while it runs.
type script struct {
	path       string
	key        arbiter.SessionKey
	newStepper NewStepper
	engine     *arbiter.Engine
	stepper    Stepper
	// lastSeq is the highest effect seq printed so far: an effect at or below it is a
	// repeat.
	lastSeq uint64
	// epoch is the session's epoch once it exists: printed once, then left out of job
	// ids ("job-1.k3f9a2" reads "job-1"), and added back to the job ids of commands.
	epoch string
}

func (s *script) do(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd == "policy" {
		return s.policy(t, td)
	}
	if s.stepper == nil {
		td.Fatalf(t, "%s before policy: a script starts with its policy", td.Cmd)
	}
	now, ev := parseEvent(t, td)
	ev = s.withEpoch(ev)
	out, sess, err := s.stepper.Step(now, ev, Creates(ev))
	text := s.render(now, ev, out, sess, err)
	if s.epoch == "" && sess != nil && sess.Epoch != "" {
		s.epoch = sess.Epoch
		text = "session: epoch " + s.epoch + "\n" + strings.TrimPrefix(text, "ok")
	}
	if s.epoch != "" {
		text = strings.ReplaceAll(text, "."+s.epoch, "")
	}
	return text
}

// withEpoch gives a job id of a command without an epoch ("job-1") the session's.
func (s *script) withEpoch(ev arbiter.Event) arbiter.Event {
	full := func(id string) string {
		if s.epoch == "" || strings.Contains(id, ".") || !strings.HasPrefix(id, "job-") {
			return id
		}
		return id + "." + s.epoch
	}
	switch e := ev.(type) {
	case arbiter.Decide:
		e.JobID = full(e.JobID)
		return e
	case arbiter.Complete:
		e.JobID = full(e.JobID)
		return e
	case arbiter.Progress:
		e.JobID = full(e.JobID)
		return e
	}
	return ev
}

func (s *script) policy(t *testing.T, td *datadriven.TestData) string {
	if s.stepper != nil {
		td.Fatalf(t, "a second policy: one script is one session under one policy")
	}
	checkArgs(t, td, "path")
	var (
		p   *arbiter.Policy
		err error
	)
	if td.HasArg("path") {
		var path string
		td.ScanArgs(t, "path", &path)
		p, err = policyfile.Load(filepath.Join(filepath.Dir(s.path), path))
	} else {
		p, err = policyfile.Parse([]byte(td.Input), td.Pos)
	}
	if err != nil {
		td.Fatalf(t, "policy: %v", err)
	}
	s.engine = &arbiter.Engine{Policy: p}
	s.stepper = s.newStepper(t, s.engine, s.key)
	return "ok"
}

// ---- output -----------------------------------------------------------------------

func (s *script) render(now time.Time, ev arbiter.Event, out arbiter.Output, sess *arbiter.Session, err error) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	if err != nil {
		msg := err.Error()
		var ae *arbiter.Error
		if errors.As(err, &ae) {
			msg = ae.Message // what the caller is told; the cause is for logs
		}
		line("error: %s: %s", arbiter.KindOf(err), msg)
		return b.String()
	}
	if out.Repeat {
		line("repeat")
	}
	if c := out.Call; c != nil {
		line("call: %s", callLine(c, ev))
	}
	if c := out.Connect; c != nil {
		line("connect: %s epoch=%s", c.State, c.Epoch)
	}
	for _, id := range out.Revoked {
		line("revoked: %s: its commit was decided on a timeline missing this event", id)
	}
	for _, d := range out.Decisions {
		line("decided: %s", decisionLine(d, now))
	}
	if d := out.Decision; d != nil {
		line("decision: %s", decisionLine(*d, now))
	}
	last := s.lastSeq
	for _, e := range effects(out.Effects, sess) {
		tag := fmt.Sprintf("#%d", e.seq)
		if e.seq <= last {
			tag += " again"
		}
		if !e.at.IsZero() && !e.at.Equal(now) {
			tag += " t=" + ms(e.at)
		}
		line("%s %s: %s", e.kind, tag, e.text)
		s.lastSeq = max(s.lastSeq, e.seq)
	}
	if out.Intent != "" {
		line("intent: %s", out.Intent)
	}
	if due, ok := s.engine.NextTimer(sess); ok {
		line("timer: t=%s", ms(due))
	}
	if !out.Changed {
		line("unchanged")
	}
	if b.Len() == 0 {
		return "ok"
	}
	return b.String()
}

func callLine(c *arbiter.CallResult, ev arbiter.Event) string {
	f := []string{c.CallID, string(c.Disposition)}
	if c.JobID != "" {
		f = append(f, "job="+c.JobID)
	}
	if c.DuplicateOf != "" {
		f = append(f, "of="+c.DuplicateOf)
	}
	if c.RunID != "" {
		f = append(f, "run="+c.RunID)
	}
	if c.BusinessKey != "" {
		f = append(f, "key="+c.BusinessKey)
	}
	if rc, ok := ev.(arbiter.RegisterCall); ok && c.Disposition == arbiter.Execute &&
		(c.Tool != rc.Tool || !reflect.DeepEqual(normalise(c.Args), normalise(rc.Args))) {
		// What the job runs is not the call itself: a confirmation runs its run's tool.
		f = append(f, "exec="+c.Tool, compact(c.Args))
	}
	if c.Repeat {
		f = append(f, "repeat")
	}
	return strings.Join(f, " ")
}

func decisionLine(d arbiter.DecisionResult, now time.Time) string {
	f := []string{d.JobID, string(d.Decision)}
	if d.Decision == arbiter.Undecided {
		f[1] = "pending"
	}
	if d.Cause != "" {
		f = append(f, "cause="+string(d.Cause))
	}
	if !d.DecidedAt.IsZero() && !d.DecidedAt.Equal(now) {
		f = append(f, "t="+ms(d.DecidedAt))
	}
	return strings.Join(f, " ") + ": " + d.Reason
}

type effect struct {
	seq  uint64
	at   time.Time
	kind string
	text string
}

// effects renders a step's effects in log order, each with the time the log gives it.
func effects(e arbiter.Effects, sess *arbiter.Session) []effect {
	at := map[uint64]time.Time{}
	if sess != nil {
		for _, x := range sess.Log {
			at[x.Seq] = x.At
		}
	}
	var out []effect
	add := func(seq uint64, kind string, f ...string) {
		out = append(out, effect{seq: seq, at: at[seq], kind: kind, text: strings.Join(f, " ")})
	}
	for _, r := range e.Responses {
		f := []string{r.CallID}
		if r.JobID != "" {
			f = append(f, "job="+r.JobID)
		}
		if r.Interim {
			f = append(f, "interim")
		}
		add(r.Seq, "response", append(f, compact(r.Payload))...)
	}
	for _, k := range e.Skips {
		f := []string{k.CallID}
		if k.JobID != "" {
			f = append(f, "job="+k.JobID)
		}
		add(k.Seq, "skip", append(f, string(k.Reason))...)
	}
	for _, u := range e.Runs {
		f := []string{u.RunID, string(u.State), "tool=" + u.Tool}
		if u.CallID != "" {
			f = append(f, "call="+u.CallID)
		}
		if u.JobID != "" {
			f = append(f, "job="+u.JobID)
		}
		text := strings.Join(f, " ")
		if u.Reason != "" {
			text += ": " + u.Reason
		}
		add(u.Seq, "run", text)
	}
	for _, n := range e.Notes {
		var f []string
		if n.JobID != "" {
			f = append(f, "job="+n.JobID)
		}
		if n.RunID != "" {
			f = append(f, "run="+n.RunID)
		}
		f = append(f, "deliver="+string(n.Deliver), "via="+string(n.Via))
		if n.CallID != "" {
			f = append(f, "call="+n.CallID)
		}
		if n.Scheduling != "" {
			f = append(f, "scheduling="+string(n.Scheduling))
		}
		add(n.Seq, "note", strings.Join(f, " ")+": "+n.Text)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// ms renders t as milliseconds after Epoch (with a fraction only when it has one).
func ms(t time.Time) string {
	return strconv.FormatFloat(float64(t.Sub(Epoch))/float64(time.Millisecond), 'f', -1, 64)
}

// compact is v as compact JSON with sorted keys, HTML characters unescaped.
func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("(not JSON: %v)", err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// normalise is v as JSON would bring it back (numbers float64, nil maps empty), to
// compare args as a store round trip sees them.
func normalise(v map[string]any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		return map[string]any{}
	}
	return out
}
