// Command load drives whole call lifecycles through the arbiter's gRPC API — the part
// of bench/run.sh that ghz cannot do, since ghz sends one RPC over and over and a
// lifecycle chains five — and reports requests per second and p50/p95/p99 per RPC as
// JSON.
//
// Modes:
//
//	lifecycle  -addr A: each of -c workers runs sessions one after another, each one
//	           call's whole life: RegisterCall (book_slot), ReportSpeech
//	           USER_ACTIVITY_START and _END, ReportTranscript with a stop phrase,
//	           Decide(prepared, wait 5s) -> CANCEL, Complete(CANCELLED).
//	echo       -addr A: the same loop shape against bench/echo: six UnaryCalls per
//	           iteration with payloads of the arbiter requests' sizes (the baseline).
//	register   -addr A: RegisterCall alone, a new session per call (ghz's scenario,
//	           with a lighter client: generated Go stubs instead of dynamic messages).
//	echo1      -addr A: one UnaryCall per iteration, as large as a RegisterCall request
//	           (register's baseline).
//	handoff    -addr A -addr2 B (two arbiters on one Redis): RegisterCall and
//	           USER_ACTIVITY_START on A, Decide(prepared, wait 10s) parked on B, then
//	           USER_ACTIVITY_END and the stop transcript on A; it measures how long
//	           after A answered the transcript B's Decide returns CANCEL.
//
// With -sessions N, exactly N iterations run in all (shared by the workers; all of them
// measured, no warmup) and then the command stops: bench/run.sh uses it with lifecycle
// and -stop-text "Stop." to leave N of bench/soak's idle sessions in the store, and to
// make a known number of RPCs while it counts Redis commands.
//
// Every loop is bounded by -d (after -warmup) and by -max-iterations per worker, and
// only loopback addresses are accepted.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Stat is one RPC's (or measurement's) summary.
type Stat struct {
	Count  int     `json:"count"`
	Errors int     `json:"errors"`
	RPS    float64 `json:"rps"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// Result is what the command prints.
type Result struct {
	Mode        string          `json:"mode"`
	Addr        string          `json:"addr"`
	Addr2       string          `json:"addr2,omitempty"`
	Concurrency int             `json:"concurrency"`
	WarmupS     float64         `json:"warmup_s"`
	DurationS   float64         `json:"duration_s"`
	Iterations  int             `json:"iterations"`
	IterPerS    float64         `json:"iterations_per_s"`
	RPCs        map[string]Stat `json:"rpcs"`
	// Handoff (mode handoff): B's Decide return minus A's transcript answer
	// (after_ack) and minus the transcript's send (after_send).
	Handoff map[string]Stat `json:"handoff,omitempty"`
	// CallsTotal counts every RPC made, warmup included (for CPU per call).
	CallsTotal int            `json:"calls_total"`
	ErrorCodes map[string]int `json:"error_codes"`
	FirstError string         `json:"first_error,omitempty"`
}

// recorder collects one worker's samples.
type recorder struct {
	all  int
	lat  map[string][]time.Duration
	errs map[string]int
	code map[string]int
	ex   string
}

func newRecorder() *recorder {
	return &recorder{lat: map[string][]time.Duration{}, errs: map[string]int{}, code: map[string]int{}}
}

// call runs fn, timing it under name when record is set.
func (r *recorder) call(record bool, name string, fn func() error) error {
	t0 := time.Now()
	err := fn()
	d := time.Since(t0)
	r.all++
	if !record {
		return err
	}
	if err != nil {
		return r.fail(true, name, err)
	}
	r.lat[name] = append(r.lat[name], d)
	return nil
}

// fail counts err against name (when record is set) and returns it.
func (r *recorder) fail(record bool, name string, err error) error {
	if record {
		r.errs[name]++
		r.code[status.Code(err).String()]++
		if r.ex == "" {
			r.ex = fmt.Sprintf("%s: %v", name, err)
		}
	}
	return err
}

func summarize(lat []time.Duration, errs int, window time.Duration) Stat {
	s := Stat{Count: len(lat), Errors: errs}
	if len(lat) == 0 {
		return s
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	q := func(p float64) time.Duration {
		i := int(p*float64(len(lat)) + 0.5)
		return lat[min(max(i-1, 0), len(lat)-1)]
	}
	s.RPS = float64(len(lat)) / window.Seconds()
	s.MeanMs = ms(sum / time.Duration(len(lat)))
	s.P50Ms, s.P95Ms, s.P99Ms, s.MaxMs = ms(q(.50)), ms(q(.95)), ms(q(.99)), ms(lat[len(lat)-1])
	return s
}

// loopback refuses any target that is not on this machine.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: only loopback targets (127.0.0.0/8, ::1, localhost)", addr)
}

func dial(addr string) (*grpc.ClientConn, error) {
	if err := loopback(addr); err != nil {
		return nil, err
	}
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

func main() {
	var (
		mode    = flag.String("mode", "lifecycle", "lifecycle, echo, register, echo1 or handoff")
		addr    = flag.String("addr", "127.0.0.1:50051", "target (loopback only)")
		addr2   = flag.String("addr2", "", "second arbiter for -mode handoff (loopback only)")
		conc    = flag.Int("c", 50, "concurrent workers (sessions in flight)")
		dur     = flag.Duration("d", 10*time.Second, "measured duration, after the warmup")
		warmup  = flag.Duration("warmup", 2*time.Second, "unmeasured warmup")
		maxIter = flag.Int("max-iterations", 1_000_000, "per-worker bound on iterations")
		park    = flag.Duration("park", 30*time.Millisecond, "handoff: how long B's Decide waits before the transcript goes to A")
		runID   = flag.String("run", fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff), "prefix of session ids")
		out     = flag.String("o", "", "write the JSON result here (default stdout)")
		free    = flag.Bool("freeport", false, "print a free TCP port on 127.0.0.1 and exit (for run.sh)")
		total   = flag.Int("sessions", 0, "if > 0: run exactly this many iterations in all (no warmup, all measured), then stop; still bounded by -d")
		stopTx  = flag.String("stop-text", stopText, "lifecycle: the transcript that stops the call")
	)
	flag.Parse()
	if *free {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		return
	}
	stopText = *stopTx
	if *total > 0 {
		*warmup = 0
	}
	if err := run(*mode, *addr, *addr2, *conc, *dur, *warmup, *maxIter, *total, *park, *runID, *out); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// run drives mode against addr (and addr2) with conc workers; total > 0 makes it run
// exactly total iterations in all (warmup must then be 0), else each worker runs until
// warmup+dur or maxIter iterations.
func run(mode, addr, addr2 string, conc int, dur, warmup time.Duration, maxIter, total int, park time.Duration, runID, out string) error {
	if conc < 1 || dur <= 0 || maxIter < 1 || total < 0 {
		return errors.New("-c, -d and -max-iterations must be positive, -sessions not negative")
	}
	conn, err := dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	var conn2 *grpc.ClientConn
	if mode == "handoff" {
		if addr2 == "" {
			return errors.New("-mode handoff needs -addr2")
		}
		if conn2, err = dial(addr2); err != nil {
			return err
		}
		defer conn2.Close()
	}
	var iter func(ctx context.Context, rec *recorder, record bool, sid string) error
	switch mode {
	case "lifecycle":
		iter = lifecycle(arbiterv1.NewArbiterServiceClient(conn))
	case "echo":
		iter = echo(testgrpc.NewTestServiceClient(conn), false)
	case "register":
		iter = register(arbiterv1.NewArbiterServiceClient(conn))
	case "echo1":
		iter = echo(testgrpc.NewTestServiceClient(conn), true)
	case "handoff":
		iter = handoff(arbiterv1.NewArbiterServiceClient(conn), arbiterv1.NewArbiterServiceClient(conn2), park)
	default:
		return fmt.Errorf("-mode %q: lifecycle, echo, register, echo1 or handoff", mode)
	}

	ctx := context.Background()
	start := time.Now()
	measureFrom := start.Add(warmup)
	end := measureFrom.Add(dur)
	var (
		wg       sync.WaitGroup
		recs     = make([]*recorder, conc)
		measured atomic.Int64
		started  atomic.Int64 // iterations begun, for total
	)
	for w := range conc {
		recs[w] = newRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range maxIter {
				now := time.Now()
				if !now.Before(end) {
					return
				}
				if total > 0 && started.Add(1) > int64(total) {
					return
				}
				// An iteration counts when it starts inside the window; its RPCs are
				// recorded only then.
				record := !now.Before(measureFrom)
				sid := fmt.Sprintf("%s-%s-%d-%d", mode, runID, w, i)
				if err := iter(ctx, recs[w], record, sid); err == nil && record {
					measured.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	window := time.Since(measureFrom)
	if window > dur || total > 0 {
		// Iterations that started before end and finished after it: count the time
		// (with total, the run ends when the last iteration does).
		dur = window
	}

	res := Result{
		Mode: mode, Addr: addr, Addr2: addr2, Concurrency: conc, WarmupS: warmup.Seconds(),
		DurationS: dur.Seconds(), Iterations: int(measured.Load()), RPCs: map[string]Stat{},
		ErrorCodes: map[string]int{},
	}
	res.IterPerS = float64(res.Iterations) / dur.Seconds()
	lat := map[string][]time.Duration{}
	errs := map[string]int{}
	for _, r := range recs {
		res.CallsTotal += r.all
		for k, v := range r.lat {
			lat[k] = append(lat[k], v...)
		}
		for k, v := range r.errs {
			errs[k] += v
		}
		for k, v := range r.code {
			res.ErrorCodes[k] += v
		}
		if res.FirstError == "" {
			res.FirstError = r.ex
		}
	}
	for name := range lat {
		if strings.HasPrefix(name, "handoff_") {
			continue
		}
		res.RPCs[name] = summarize(lat[name], errs[name], dur)
	}
	for name := range errs {
		if _, ok := res.RPCs[name]; !ok {
			res.RPCs[name] = summarize(nil, errs[name], dur)
		}
	}
	if mode == "handoff" {
		res.Handoff = map[string]Stat{
			"after_ack":  summarize(lat["handoff_after_ack"], 0, dur),
			"after_send": summarize(lat["handoff_after_send"], 0, dur),
		}
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

var (
	slot     = mustStruct(map[string]any{"slot": "tomorrow 3pm"})
	stopText = "Actually, stop. Don't book it."
)

func mustStruct(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

// lifecycle is one call's life in a new session, on the stop-phrase path (decided at
// once, so no policy timer is in the measurement).
func lifecycle(c arbiterv1.ArbiterServiceClient) func(context.Context, *recorder, bool, string) error {
	return func(ctx context.Context, rec *recorder, record bool, sid string) error {
		var job string
		if err := rec.call(record, "RegisterCall", func() error {
			r, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "fc_1", Tool: "book_slot", Args: slot})
			if err == nil && r.GetDisposition() != arbiterv1.Disposition_DISPOSITION_EXECUTE {
				err = fmt.Errorf("disposition %v, want EXECUTE", r.GetDisposition())
			}
			job = r.GetJobId()
			return err
		}); err != nil {
			return err
		}
		for _, ev := range []arbiterv1.SpeechEvent{arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START, arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END} {
			if err := rec.call(record, "ReportSpeech", func() error {
				_, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: ev})
				return err
			}); err != nil {
				return err
			}
		}
		if err := rec.call(record, "ReportTranscript", func() error {
			_, err := c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Text: stopText})
			return err
		}); err != nil {
			return err
		}
		if err := rec.call(record, "Decide", func() error {
			d, err := c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: job, Prepared: true, Wait: durationpb.New(5 * time.Second)})
			if err == nil && d.GetDecision() != arbiterv1.Decision_DECISION_CANCEL {
				err = fmt.Errorf("decision %v, want CANCEL", d.GetDecision())
			}
			return err
		}); err != nil {
			return err
		}
		return rec.call(record, "Complete", func() error {
			_, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})
			return err
		})
	}
}

// register is RegisterCall alone: a new session, one side-effecting call.
func register(c arbiterv1.ArbiterServiceClient) func(context.Context, *recorder, bool, string) error {
	return func(ctx context.Context, rec *recorder, record bool, sid string) error {
		return rec.call(record, "RegisterCall", func() error {
			r, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "fc_1", Tool: "book_slot", Args: slot})
			if err == nil && r.GetDisposition() != arbiterv1.Disposition_DISPOSITION_EXECUTE {
				err = fmt.Errorf("disposition %v, want EXECUTE", r.GetDisposition())
			}
			return err
		})
	}
}

// echo mirrors lifecycle's six RPCs against the echo server: each UnaryCall carries
// (and gets back) a payload as large as the arbiter request it stands for. With
// first, only the first (RegisterCall's size): register's baseline.
func echo(c testgrpc.TestServiceClient, first bool) func(context.Context, *recorder, bool, string) error {
	sizes := []int{
		proto.Size(&arbiterv1.RegisterCallRequest{SessionId: "lifecycle-00000000-00-000", CallId: "fc_1", Tool: "book_slot", Args: slot}),
		proto.Size(&arbiterv1.ReportSpeechRequest{SessionId: "lifecycle-00000000-00-000", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START}),
		proto.Size(&arbiterv1.ReportSpeechRequest{SessionId: "lifecycle-00000000-00-000", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END}),
		proto.Size(&arbiterv1.ReportTranscriptRequest{SessionId: "lifecycle-00000000-00-000", Text: stopText}),
		proto.Size(&arbiterv1.DecideRequest{SessionId: "lifecycle-00000000-00-000", JobId: "job-1", Prepared: true, Wait: durationpb.New(5 * time.Second)}),
		proto.Size(&arbiterv1.CompleteRequest{SessionId: "lifecycle-00000000-00-000", JobId: "job-1", Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED}),
	}
	if first {
		sizes = sizes[:1]
	}
	reqs := make([]*testgrpc.SimpleRequest, len(sizes))
	for i, n := range sizes {
		reqs[i] = &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: make([]byte, n)}}
	}
	return func(ctx context.Context, rec *recorder, record bool, sid string) error {
		for _, req := range reqs {
			if err := rec.call(record, "UnaryCall", func() error {
				_, err := c.UnaryCall(ctx, req)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}
}

// handoff: the decision is made on A while B holds the Decide.
func handoff(a, b arbiterv1.ArbiterServiceClient, park time.Duration) func(context.Context, *recorder, bool, string) error {
	return func(ctx context.Context, rec *recorder, record bool, sid string) error {
		var job string
		if err := rec.call(record, "RegisterCall", func() error {
			r, err := a.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: sid, CallId: "fc_1", Tool: "book_slot", Args: slot})
			job = r.GetJobId()
			return err
		}); err != nil {
			return err
		}
		if err := rec.call(record, "ReportSpeech", func() error {
			_, err := a.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START})
			return err
		}); err != nil {
			return err
		}
		type decided struct {
			at  time.Time
			d   arbiterv1.Decision
			err error
		}
		done := make(chan decided, 1)
		go func() {
			d, err := b.Decide(ctx, &arbiterv1.DecideRequest{SessionId: sid, JobId: job, Prepared: true, Wait: durationpb.New(10 * time.Second)})
			done <- decided{time.Now(), d.GetDecision(), err}
		}()
		time.Sleep(park)
		select {
		case r := <-done:
			// B answered before the transcript: the measurement would be void.
			return rec.fail(record, "Decide(B)", fmt.Errorf("decide on B returned %v (%v) before the transcript", r.d, r.err))
		default:
		}
		if err := rec.call(record, "ReportSpeech", func() error {
			_, err := a.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END})
			return err
		}); err != nil {
			<-done
			return err
		}
		sent := time.Now()
		var acked time.Time
		if err := rec.call(record, "ReportTranscript", func() error {
			_, err := a.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: sid, Text: stopText})
			acked = time.Now()
			return err
		}); err != nil {
			<-done
			return err
		}
		r := <-done
		if r.err == nil && r.d != arbiterv1.Decision_DECISION_CANCEL {
			r.err = fmt.Errorf("decision %v, want CANCEL", r.d)
		}
		if r.err != nil {
			return rec.fail(record, "Decide(B)", r.err)
		}
		if record {
			// Negative when B answered before A's response reached the client.
			rec.lat["handoff_after_ack"] = append(rec.lat["handoff_after_ack"], max(r.at.Sub(acked), 0))
			rec.lat["handoff_after_send"] = append(rec.lat["handoff_after_send"], r.at.Sub(sent))
		}
		return rec.call(record, "Complete", func() error {
			_, err := a.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: sid, JobId: job, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})
			return err
		})
	}
}
