package arbiter

// The effect log. Every effect handed out for the first time goes through log: it gets
// the session's next sequence number and a place in the session log (Watch), so the
// unary RPCs and Watch hand out the same effects in the same order. Repeats (a retried
// RegisterCall or Complete) return the recorded effect with its original number and
// are not logged again.

func (st *step) log(e LogEntry) uint64 {
	s := st.s
	s.LogSeq++
	e.Seq, e.At = s.LogSeq, s.Now
	s.Log = append(s.Log, e)
	if n := len(s.Log) - LogKeep; n > 0 {
		s.Log = s.Log[n:]
	}
	st.out.Changed = true
	return e.Seq
}

// response is the function response recorded in c.Outcome.
func (st *step) response(c *Call) Response {
	return Response{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Payload: c.Outcome.Response, Seq: c.Outcome.Seq}
}

// emitResponse hands out the function response recorded in c.Outcome.
func (st *step) emitResponse(c *Call) {
	r := st.response(c)
	r.Seq = st.log(LogEntry{Response: &r})
	c.Outcome.Seq = r.Seq
	st.out.Effects.Responses = append(st.out.Effects.Responses, r)
}

// kill marks a pending call dead (never answer it) and hands out its skip.
func (st *step) kill(c *Call, reason SkipReason) {
	if c.Outcome != nil {
		return
	}
	c.Outcome = &CallOutcome{At: st.s.Now, Dead: true, Reason: reason}
	st.emitSkip(c)
}

// emitSkip hands out the skip recorded in c.Outcome.
func (st *step) emitSkip(c *Call) {
	sk := Skip{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Reason: c.Outcome.Reason}
	sk.Seq = st.log(LogEntry{Skip: &sk})
	c.Outcome.Seq = sk.Seq
	st.out.Effects.Skips = append(st.out.Effects.Skips, sk)
}

// emitInterim hands out a non-final response for c (its outcome stays unset).
func (st *step) emitInterim(c *Call, payload map[string]any) {
	r := Response{CallID: c.ID, Name: c.Tool, JobID: c.JobID, Payload: payload, Interim: true}
	r.Seq = st.log(LogEntry{Response: &r})
	st.out.Effects.Responses = append(st.out.Effects.Responses, r)
}

func (st *step) emitNote(n Note) {
	n.Seq = st.log(LogEntry{Note: &n})
	st.out.Effects.Notes = append(st.out.Effects.Notes, n)
}

func (st *step) emitRun(u RunUpdate) {
	u.At = st.s.Now
	u.Seq = st.log(LogEntry{Run: &u})
	st.out.Effects.Runs = append(st.out.Effects.Runs, u)
}
