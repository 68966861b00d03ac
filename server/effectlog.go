package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
)

// The effect log: one info line per decision, function response, skip and note the
// arbiter hands out, and per commit it withdraws, each when it is made (a repeat
// answered again to a retry is not logged again), under one set of keys:
//
//	session_id, call_id, job_id, tool, run_id  the ids of what the line is about
//	                                            (empty when it has none; run_id only
//	                                            when set), not the request's
//	decision, cause, reason                    a decision
//	prepared_for                               a decision: how long after its job's
//	                                            prepare finished (a duration)
//	status, interim, pending                   a response: its payload status, whether
//	                                            it is a progress update, and how long
//	                                            the call id was pending (a duration)
//	reason                                     a skip: why the call id is dead
//	deliver, via, text                         a note
//
// plus the tenant, from the request. The message says what the line is: "decision",
// "response", "skip", "note", "commit revoked".

// Log keys of the effect lines (and of the request fields, requestFields).
const (
	keySession = "session_id"
	keyCall    = "call_id"
	keyJob     = "job_id"
	keyRun     = "run_id"
	keyTool    = "tool"
)

// logStep logs what one step handed out for the first time (see the file comment).
// sess is the session after the step.
func (s *Server) logStep(ctx context.Context, out arbiter.Output, sess *arbiter.Session) {
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	sid := slog.String(keySession, sess.Key.ID)
	for _, d := range out.Decisions {
		attrs := append(ids(sid, opener(sess, d.JobID), d.JobID, "", d.Tool),
			slog.String("decision", string(d.Decision)), slog.String("cause", string(d.Cause)), slog.String("reason", d.Reason))
		if j := sess.Job(d.JobID); j != nil && !j.PreparedAt.IsZero() && !d.DecidedAt.Before(j.PreparedAt) {
			attrs = append(attrs, slog.Duration("prepared_for", d.DecidedAt.Sub(j.PreparedAt).Round(time.Millisecond)))
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "decision", attrs...)
	}
	for _, id := range out.Revoked {
		s.log.LogAttrs(ctx, slog.LevelInfo, "commit revoked", append(ids(sid, opener(sess, id), id, "", toolOf(sess, id)),
			slog.String("reason", "an event the agent observed before the commit came due arrived after it"))...)
	}
	e := out.Effects
	for _, r := range e.Responses {
		if r.Seq <= out.LogStart {
			continue
		}
		attrs := append(ids(sid, r.CallID, r.JobID, "", r.Name), slog.String("status", payloadStatus(r.Payload)), slog.Bool("interim", r.Interim))
		if c := sess.Call(r.CallID); c != nil && !r.Interim && c.Outcome != nil {
			attrs = append(attrs, slog.Duration("pending", c.Outcome.At.Sub(c.RegisteredAt).Round(time.Millisecond)))
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "response", attrs...)
	}
	for _, sk := range e.Skips {
		if sk.Seq > out.LogStart {
			s.log.LogAttrs(ctx, slog.LevelInfo, "skip", append(ids(sid, sk.CallID, sk.JobID, "", sk.Name), slog.String("reason", string(sk.Reason)))...)
		}
	}
	for _, n := range e.Notes {
		if n.Seq > out.LogStart {
			s.log.LogAttrs(ctx, slog.LevelInfo, "note", append(ids(sid, n.CallID, n.JobID, n.RunID, toolOf(sess, n.JobID)),
				slog.String("deliver", string(n.Deliver)), slog.String("via", string(n.Via)), slog.String("text", n.Text))...)
		}
	}
}

// ids are a line's ids: session, call, job and tool always (empty when the effect has
// none, so the request's own ids, which the logger adds to every line, do not stand in
// for them), the run when there is one.
func ids(session slog.Attr, call, job, run, tool string) []slog.Attr {
	attrs := append(make([]slog.Attr, 0, 10), session, slog.String(keyCall, call), slog.String(keyJob, job), slog.String(keyTool, tool))
	if run != "" {
		attrs = append(attrs, slog.String(keyRun, run))
	}
	return attrs
}

// toolOf is the tool of job id ("" for none).
func toolOf(sess *arbiter.Session, id string) string {
	if j := sess.Job(id); j != nil {
		return j.Tool
	}
	return ""
}

// LogDurations is a slog.HandlerOptions.ReplaceAttr that writes durations as Go
// durations ("1.5s", as the text handler does) instead of the JSON handler's integer
// nanoseconds.
func LogDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
