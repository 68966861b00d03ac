package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/replay"
)

// diffLine is one line of `replay --diff` output.
type diffLine struct {
	Trace string `json:"trace"`
	replay.DiffLine
}

// runDiff is `replay --diff`: each trace replayed in process under its recorded
// policy (session_start.tools) and under next (--tools); their outcomes are compared
// by content, never by time (replay.Diff), and each difference is a JSON line on
// stdout. Without a recorded policy the baseline is the trace's recorded outcomes
// (ref_ lines). When a trace has both, the stderr summary also says whether the
// replay under the recorded policy reproduces the recorded outcomes (what an export
// can and cannot carry). Exit 1 when any trace differs or cannot be replayed.
func (c *replayCmd) runDiff(env *runEnv, next *arbiter.Policy) error {
	if c.Tools == "" {
		fmt.Fprintln(env.stderr, "arbiter: --diff needs --tools: the policy to compare with the trace's")
		return exitError(2)
	}
	failed := false
	for _, path := range c.Traces {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		summary, differs, err := c.diffTrace(env, path, name, next)
		if err != nil {
			fmt.Fprintf(env.stderr, "%s: ERROR: %v\n", name, err)
			failed = true
			continue
		}
		fmt.Fprintf(env.stderr, "%s: %s\n", name, summary)
		failed = failed || differs
	}
	if failed {
		return exitError(1)
	}
	return nil
}

// diffTrace compares one trace's runs; it returns the summary line and whether they
// differ.
func (c *replayCmd) diffTrace(env *runEnv, path, name string, next *arbiter.Policy) (string, bool, error) {
	events, err := replay.ReadTraceFile(path, env.stderr)
	if err != nil {
		return "", false, err
	}
	if len(events) == 0 {
		return "", false, fmt.Errorf("an empty trace: nothing to compare")
	}
	opt := replay.Options{SessionID: c.sessionID("replay-" + sanitize(name)), PrepareMS: c.PrepareMS}
	nextRes, err := replay.RunLocal(env.ctx, next, events, opt, nil)
	if err != nil {
		return "", false, fmt.Errorf("under %s: %v", c.Tools, err)
	}
	newOut := replay.OutcomesOf(nextRes)
	recorded := replay.HasRecordedOutcomes(events)
	var (
		base     *replay.Outcomes
		baseName string
		fidelity string
	)
	switch {
	case len(events) > 0 && len(events[0].Tools) > 0:
		bp, err := policyfile.Parse(events[0].Tools, path+": session_start.tools")
		if err != nil {
			return "", false, err
		}
		baseRes, err := replay.RunLocal(env.ctx, bp, events, opt, nil)
		if err != nil {
			return "", false, fmt.Errorf("under the recorded policy: %v", err)
		}
		base = replay.OutcomesOf(baseRes)
		baseName = "the policy recorded in the trace"
		if d := events[0].PolicyDigest; d != "" {
			baseName += " (server policy " + d + ")"
		}
		if recorded {
			if d := replay.Diff(replay.RecordedOutcomes(events), base); len(d) == 0 {
				fidelity = "; the replay under it reproduces the recorded session"
			} else {
				fidelity = fmt.Sprintf("; the replay under it differs from the recorded session (%s)", replay.Count(d))
			}
		}
	case recorded:
		base, baseName = replay.RecordedOutcomes(events), "the outcomes recorded in the trace"
	default:
		return "", false, fmt.Errorf("the trace records neither its policy (session_start.tools) nor its outcomes (ref_ lines): nothing to compare %s with; export the session with arbiter export", c.Tools)
	}
	d := replay.Diff(base, newOut)
	for _, l := range d {
		b, err := json.Marshal(diffLine{Trace: name, DiffLine: l})
		if err != nil {
			return "", false, err
		}
		fmt.Fprintf(env.stdout, "%s\n", b)
	}
	same := ""
	if events[0].PolicyDigest != "" && events[0].PolicyDigest == next.Digest() {
		same = " (the same policy)"
	}
	return fmt.Sprintf("old: %s%s; new: %s (%s)%s: %s", baseName, fidelity, c.Tools, next.Digest(), same, replay.Count(d)), len(d) > 0, nil
}
