package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/voicearbiter/arbiter/replay"
)

// replayCmd is `arbiter replay`.
type replayCmd struct {
	Tools     string   `type:"existingfile" help:"Tool-policy YAML file the traces ran under."`
	PrepareMS *int64   `name:"prepare-ms" help:"Fake backend prepare time in ms for every side-effecting call (overrides the trace)."`
	Target    []string `sep:"," placeholder:"HOST:PORT" help:"Replay against running servers (host:port, comma-separated) in real time, each RPC to the next target in turn, all traces at once. The servers' tool policy must match --tools. Default: an in-process arbiter on a virtual clock per trace."`
	Diff      bool     `help:"Replay each trace under --tools and under the policy it was recorded with (its session_start tools, as arbiter export writes it; else compare with its recorded outcomes, the ref_ lines), and print which dispositions, decisions, responses, skips and notes differ (JSON lines); exit 1 when any do. In process only."`
	Session   string   `help:"Session id to replay under (one trace only; default replay-NAME, with --target plus a per-run suffix): to find the session afterwards, e.g. with arbiter export. Give a new id each run: one in use continues that session."`
	Traces    []string `arg:"" type:"existingfile" help:"Trace files (JSON lines)."`
}

// traceRun is one trace's replay: its result and its output lines.
type traceRun struct {
	name string
	res  *replay.Result
	out  bytes.Buffer
	err  error
}

// Run replays each trace. Without --target, each runs on its own in-process arbiter and
// virtual clock, one after another, in milliseconds. With --target, every trace runs at
// once against the running servers in real time, under its own session id (the trace
// name plus a per-run nonce, so runs never collide), with its RPCs spread round-robin
// over the targets. Output lines go to stdout (trace by trace, in the order given), a
// summary table to stderr. The exit code is 1 when any trace ends with an unanswered
// call or a double commit, or cannot be replayed.
func (c *replayCmd) Run(env *runEnv) error {
	if c.PrepareMS != nil && (*c.PrepareMS < 0 || *c.PrepareMS > replay.MaxPrepareMS) {
		fmt.Fprintf(env.stderr, "arbiter: --prepare-ms: %d is outside 0..%d (24 h)\n", *c.PrepareMS, replay.MaxPrepareMS)
		return exitError(2) // a usage error, like kong's own
	}
	if c.Tools == "" {
		fmt.Fprintln(env.stderr, "arbiter replay: no --tools: every tool is read-only pass-through, nothing is held or deduplicated")
	}
	if c.Session != "" && len(c.Traces) != 1 {
		fmt.Fprintln(env.stderr, "arbiter: --session names the session of one trace: give one trace")
		return exitError(2)
	}
	if c.Diff && len(c.Target) > 0 {
		fmt.Fprintln(env.stderr, "arbiter: --diff replays in process: drop --target")
		return exitError(2)
	}
	policy, err := loadPolicy(c.Tools)
	if err != nil {
		return err
	}
	if c.Diff {
		return c.runDiff(env, policy)
	}
	runs := make([]*traceRun, len(c.Traces))
	for i, path := range c.Traces {
		runs[i] = &traceRun{name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
	}
	if len(c.Target) == 0 {
		for i, path := range c.Traces {
			r := runs[i]
			r.res, r.err = replayFile(env, path, r.name, env.stdout, func(events []replay.TraceEvent, out io.Writer) (*replay.Result, error) {
				return replay.RunLocal(env.ctx, policy, events, replay.Options{SessionID: c.sessionID("replay-" + sanitize(r.name)), PrepareMS: c.PrepareMS}, out)
			})
		}
	} else if err := c.runRemote(env, runs); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stderr, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "trace\tcalls\tcommits\tcancels\tdouble\tanswered\tskipped\tnotes\tunanswered\tdecisions (t_ms, Δref)\tresult")
	failed := false
	for _, r := range runs {
		if r.err != nil {
			failed = true
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\tERROR: %v\n", r.name, r.err)
			continue
		}
		res := r.res
		s := res.Summary
		verdict := "ok"
		if res.Failed() {
			verdict, failed = "FAIL", true
		}
		var ds []string
		for _, d := range res.Decisions {
			x := fmt.Sprintf("%s@%d", d.Decision, d.TMs)
			if d.RefTMs >= 0 {
				x += fmt.Sprintf(" (%+dms)", d.TMs-d.RefTMs)
			}
			ds = append(ds, x)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.name, s.Calls, s.Commits, s.Cancels,
			s.DoubleCommits, s.Answered, s.Skipped, res.Notes, strings.Join(s.Unanswered, ","), strings.Join(ds, " "), verdict)
	}
	tw.Flush()
	if failed {
		return exitError(1)
	}
	return nil
}

// runRemote replays every trace concurrently against the --target servers in real
// time, then writes the output lines trace by trace.
func (c *replayCmd) runRemote(env *runEnv, runs []*traceRun) error {
	var targets []string
	for _, t := range c.Target {
		if t = strings.TrimSpace(t); t != "" {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("--target: no address")
	}
	remote, err := replay.DialRemote(targets)
	if err != nil {
		return fmt.Errorf("--target: %v", err)
	}
	defer remote.Close()
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	run := fmt.Sprintf("%s-%s", time.Now().UTC().Format("150405"), hex.EncodeToString(nonce))
	// Parse every trace first (warnings go to stderr in order), then play them all.
	events := make([][]replay.TraceEvent, len(runs))
	for i, path := range c.Traces {
		_, runs[i].err = replayFile(env, path, runs[i].name, nil, func(evs []replay.TraceEvent, _ io.Writer) (*replay.Result, error) {
			events[i] = evs
			return nil, nil
		})
	}
	var wg sync.WaitGroup
	for i, r := range runs {
		if r.err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A connection of its own, so the trace's RPCs take turns over every
			// target whatever the other traces send; ready before the clock starts.
			client, err := remote.Client(env.ctx)
			if err != nil {
				r.err = fmt.Errorf("--target: %v", err)
				return
			}
			opt := replay.Options{SessionID: c.sessionID(sanitize("replay-" + r.name + "-" + run)), PrepareMS: c.PrepareMS, Start: time.Now()}
			r.res, r.err = replay.Run(env.ctx, client, replay.NewRealClock(env.ctx), events[i], opt, &r.out)
		}()
	}
	wg.Wait()
	for _, r := range runs {
		_, _ = env.stdout.Write(r.out.Bytes())
	}
	return nil
}

// sessionID is --session, or def.
func (c *replayCmd) sessionID(def string) string {
	if c.Session != "" {
		return c.Session
	}
	return def
}

// replayFile parses the trace at path and replays it with play, writing output lines
// to out.
func replayFile(env *runEnv, path, name string, out io.Writer, play func([]replay.TraceEvent, io.Writer) (*replay.Result, error)) (*replay.Result, error) {
	events, err := replay.ReadTraceFile(path, env.stderr)
	if err != nil {
		return nil, err
	}
	return play(events, out)
}

// sanitize makes a trace name usable as a session id: at most 128 characters from
// [A-Za-z0-9_.-], keeping the end (a run's nonce) when it must cut.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[len(b)-128:]
	}
	return string(b)
}
