package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/replay"
)

// replayCmd is `arbiter replay`.
type replayCmd struct {
	Tools     string   `type:"existingfile" help:"Tool-policy YAML file the traces ran under."`
	PrepareMS *int64   `name:"prepare-ms" help:"Fake backend prepare time in ms for every side-effecting call (overrides the trace)."`
	Traces    []string `arg:"" type:"existingfile" help:"Trace files (JSON lines)."`
}

// Run replays each trace on its own in-process arbiter and virtual clock. Output
// lines go to stdout, a summary table to stderr. The exit code is 1 when any trace
// ends with an unanswered call or a double commit, or cannot be replayed.
func (c *replayCmd) Run(env *runEnv) error {
	if c.PrepareMS != nil && *c.PrepareMS < 0 {
		return fmt.Errorf("--prepare-ms: %d is negative", *c.PrepareMS)
	}
	policy, err := loadPolicy(c.Tools)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stderr, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "trace\tcalls\tcommits\tcancels\tdouble\tanswered\tskipped\tnotes\tunanswered\tdecisions (t_ms, Δref)\tresult")
	failed := false
	for _, path := range c.Traces {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		res, err := replayFile(env, path, name, policy, c.PrepareMS)
		if err != nil {
			failed = true
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\tERROR: %v\n", name, err)
			continue
		}
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
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", name, s.Calls, s.Commits, s.Cancels,
			s.DoubleCommits, s.Answered, s.Skipped, res.Notes, strings.Join(s.Unanswered, ","), strings.Join(ds, " "), verdict)
	}
	tw.Flush()
	if failed {
		return exitError(1)
	}
	return nil
}

func replayFile(env *runEnv, path, name string, policy *arbiter.Policy, prepareMS *int64) (*replay.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	events, err := replay.ParseTrace(f, path, env.stderr)
	if err != nil {
		return nil, err
	}
	return replay.RunLocal(env.ctx, policy, events, replay.Options{SessionID: "replay-" + sanitize(name), PrepareMS: prepareMS}, env.stdout)
}

// sanitize makes a trace name usable as a session id.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}
