package main

import (
	"fmt"
	"io"
	"os"

	"github.com/voicearbiter/arbiter/fakeprovider"
	"github.com/voicearbiter/arbiter/replay"
)

// fpCheckCmd is `arbiter fake-provider check`.
type fpCheckCmd struct {
	Record     string   `required:"" type:"existingfile" placeholder:"FILE" help:"The fake provider's record (fake-provider --record)."`
	Reference  string   `type:"existingfile" placeholder:"FILE" help:"arbiter replay's output for the trace under the agent's tools policy (one trace only; used for Gemini and OpenAI sessions alike)."`
	Tools      string   `type:"existingfile" placeholder:"FILE" help:"Tool-policy YAML the agent runs with: each session's reference is its trace as its wire carried it (docs/fake-provider.md), replayed in-process as arbiter replay does."`
	BackendLog string   `name:"backend-log" type:"existingfile" placeholder:"FILE" help:"The agent's backend log (JSON lines {\"out\":\"commit\",\"job_id\":...}, docs/fake-provider.md): its commits and cancels are compared with the reference's decisions."`
	Stack      string   `default:"fake-provider" help:"Name of the agent stack in the summary line."`
	Traces     []string `arg:"" placeholder:"TRACE" help:"The traces the record played: files, directories or globs."`
}

// Run checks the record against each trace's reference and prints a line per session,
// the warnings, the sessions the fake refused ("skipped: ..." with the reason), the
// mismatches and the summary line ("STACK: sessions N, responses N, dead ids answered
// N, notes N, commits N, max decision offset Nms, skipped N"). Exit code 1 on any
// mismatch, 2 for a usage error.
func (c *fpCheckCmd) Run(env *runEnv) error {
	traces, err := fakeprovider.LoadTraces(c.Traces, env.stderr)
	if err != nil {
		return err
	}
	switch {
	case c.Reference != "" && c.Tools != "":
		fmt.Fprintln(env.stderr, "arbiter fake-provider check: --reference and --tools: pick one")
		return exitError(2)
	case c.Reference != "" && len(traces) != 1:
		fmt.Fprintf(env.stderr, "arbiter fake-provider check: --reference is one trace's reference, and %d traces were given (use --tools)\n", len(traces))
		return exitError(2)
	case c.Reference == "" && c.Tools == "":
		fmt.Fprintln(env.stderr, "arbiter fake-provider check: the reference comes from --reference FILE or --tools FILE")
		return exitError(2)
	}
	in := fakeprovider.CheckInput{Stack: c.Stack}
	if err := c.references(env, traces, &in); err != nil {
		return err
	}
	if in.Record, err = readWith(c.Record, fakeprovider.ReadRecord); err != nil {
		return err
	}
	if c.BackendLog != "" {
		if in.Backend, err = readWith(c.BackendLog, fakeprovider.ReadBackendLog); err != nil {
			return err
		}
		if in.Backend == nil {
			in.Backend = []fakeprovider.BackendLine{} // a log without decisions is still a log
		}
	}
	rep := fakeprovider.Check(in)
	for _, d := range rep.Details {
		fmt.Fprintln(env.stdout, d)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(env.stdout, "warning:", w)
	}
	for _, sk := range rep.Skips {
		fmt.Fprintln(env.stdout, "skipped:", sk)
	}
	if c.BackendLog == "" {
		fmt.Fprintln(env.stdout, "note: no --backend-log: commits not checked")
	}
	for _, m := range rep.Mismatches {
		fmt.Fprintln(env.stdout, "MISMATCH:", m)
	}
	fmt.Fprintln(env.stdout, rep.Summary())
	if !rep.OK() {
		return exitError(1)
	}
	return nil
}

// references reads --reference (one trace's fixed reference, for every session of
// it), or gives Check the replay under --tools, so each session's reference is its
// trace as its wire carried it, replayed in-process.
func (c *fpCheckCmd) references(env *runEnv, traces []fakeprovider.Trace, in *fakeprovider.CheckInput) error {
	in.References = make([]fakeprovider.Reference, len(traces))
	for i, tr := range traces {
		in.References[i] = fakeprovider.Reference{Trace: tr}
	}
	if c.Reference != "" {
		lines, err := readWith(c.Reference, fakeprovider.ReadReference)
		if err != nil {
			return err
		}
		in.References[0].Lines = lines
		return nil
	}
	policy, err := loadPolicy(c.Tools)
	if err != nil {
		return err
	}
	in.Replay = func(tr fakeprovider.Trace, events []replay.TraceEvent) ([]replay.Line, error) {
		res, err := replay.RunLocal(env.ctx, policy, events, replay.Options{SessionID: "check-" + sanitize(tr.Name)}, nil)
		if err != nil {
			return nil, err
		}
		return res.Lines, nil
	}
	return nil
}

// readWith opens path and parses it with read.
func readWith[T any](path string, read func(r io.Reader, name string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, path)
}
