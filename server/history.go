package server

import (
	"context"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// GetHistory implements arbiterv1.ArbiterServiceServer: the session's history
// entries and its effect log, merged in the order the engine made them (an entry
// numbered seq N after effect N, before effect N+1), with the policy the calls ran
// under. INVALID_ARGUMENT naming `session_id`; NOT_FOUND for an unknown or expired
// session, or another tenant's (the key is scoped by the caller's tenant).
func (s *Server) GetHistory(ctx context.Context, req *arbiterv1.GetHistoryRequest) (*arbiterv1.GetHistoryResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	ss, err := s.svc.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	policy := s.svc.Engine.Policy
	resp := &arbiterv1.GetHistoryResponse{
		SessionId: ss.Key.ID, Epoch: ss.Epoch, CreatedAt: timestamppb.New(ss.CreatedAt),
		MaxBytes: uint64(s.svc.Engine.HistoryBound(ss)), ServerPolicyDigest: policy.Digest(),
	}
	if len(ss.Log) > 0 {
		resp.FirstSeq = ss.Log[0].Seq
	}
	h := ss.History
	if h == nil {
		h = &arbiter.History{Partial: true}
	}
	resp.Record, resp.Bytes, resp.Dropped, resp.PolicyDigest = h.Record, uint64(h.Bytes), uint64(h.Dropped), h.Policy
	// Complete: every input since the start is here (the effect log may have dropped
	// old effects; they are outputs, which a replay makes again).
	resp.Complete = h.Complete()
	at := func(ms int64) *timestamppb.Timestamp {
		return timestamppb.New(ss.CreatedAt.Add(time.Duration(ms) * time.Millisecond))
	}
	var tools []string
	log := ss.Log
	for _, e := range h.Entries {
		for len(log) > 0 && log[0].Seq <= e.Seq {
			m, err := logEntryPB(log[0], ss.CreatedAt)
			if err != nil {
				return nil, err
			}
			resp.Entries = append(resp.Entries, m)
			log = log[1:]
		}
		m, err := historyEntryPB(e)
		if err != nil {
			return nil, err
		}
		m.At = at(e.MS)
		resp.Entries = append(resp.Entries, m)
		if c := e.Call; c != nil && !slices.Contains(tools, c.Tool) {
			tools = append(tools, c.Tool)
		}
	}
	for _, x := range log {
		m, err := logEntryPB(x, ss.CreatedAt)
		if err != nil {
			return nil, err
		}
		resp.Entries = append(resp.Entries, m)
	}
	if resp.Policy, err = structpb.NewStruct(policyfile.Document(policy.Subset(tools))); err != nil {
		return nil, arbiter.Wrap(arbiter.Internal, err, "encode policy")
	}
	return resp, nil
}

// logEntryPB converts an effect of the log into a history entry.
func logEntryPB(x arbiter.LogEntry, created time.Time) (*arbiterv1.HistoryEntry, error) {
	m := &arbiterv1.HistoryEntry{TMs: x.At.Sub(created).Milliseconds(), At: timestamppb.New(x.At), Seq: x.Seq}
	w, err := watchPB(x)
	if err != nil {
		return nil, err
	}
	switch e := w.Effect.(type) {
	case *arbiterv1.WatchResponse_Response:
		m.Entry = &arbiterv1.HistoryEntry_Response{Response: e.Response}
	case *arbiterv1.WatchResponse_Skip:
		m.Entry = &arbiterv1.HistoryEntry_Skip{Skip: e.Skip}
	case *arbiterv1.WatchResponse_Note:
		m.Entry = &arbiterv1.HistoryEntry_Note{Note: e.Note}
	case *arbiterv1.WatchResponse_Run:
		m.Entry = &arbiterv1.HistoryEntry_Run{Run: e.Run}
	}
	return m, nil
}

// historyEntryPB converts a history entry (its time is set by the caller). Errors:
// Internal for args or a result that do not encode, or an entry of no kind.
func historyEntryPB(e arbiter.HistoryEntry) (*arbiterv1.HistoryEntry, error) {
	m := &arbiterv1.HistoryEntry{TMs: e.MS, ObservedMs: e.ObservedMS, Seq: e.Seq, Clipped: e.Clipped}
	strct := func(v map[string]any) (*structpb.Struct, error) {
		if v == nil {
			return nil, nil
		}
		p, err := structpb.NewStruct(v)
		if err != nil {
			return nil, arbiter.Wrap(arbiter.Internal, err, "encode history entry")
		}
		return p, nil
	}
	var err error
	switch {
	case e.Call != nil:
		c := e.Call
		hc := &arbiterv1.HistoryCall{
			CallId: c.ID, Minted: c.Minted, Tool: c.Tool, RawArgs: c.RawArgs, Behavior: behaviorPB(c.Behavior),
			BusinessKey: c.BusinessKey, Disposition: dispositionPB(c.Disposition), JobId: c.Job, RunId: c.Run,
			DuplicateOf: c.DuplicateOf, JobTool: c.JobTool, SideEffect: c.SideEffect,
		}
		if c.ToolChoiceNone {
			hc.ToolChoice = arbiterv1.ToolChoice_TOOL_CHOICE_NONE
		}
		if hc.Args, err = strct(c.Args); err != nil {
			return nil, err
		}
		m.Entry = &arbiterv1.HistoryEntry_Call{Call: hc}
	case e.Speech != nil:
		var ev arbiterv1.SpeechEvent
		for k, v := range speechKinds {
			if v == e.Speech.Kind {
				ev = k
			}
		}
		m.Entry = &arbiterv1.HistoryEntry_Speech{Speech: &arbiterv1.HistorySpeech{
			Event: ev, UtteranceId: e.Speech.UtteranceID, Utterance: int32(e.Speech.Utterance)}}
	case e.Transcript != nil:
		t := e.Transcript
		role := arbiterv1.Role_ROLE_USER
		if t.Model {
			role = arbiterv1.Role_ROLE_MODEL
		}
		ht := &arbiterv1.HistoryTranscript{
			Role: role, Text: t.Text, Interim: t.Interim, UtteranceId: t.UtteranceID, Utterance: int32(t.Utterance), Intent: string(t.Intent),
			Discarded: t.Discarded}
		if r := t.Reading; r != nil {
			ht.Reading = &arbiterv1.AgentReading{Intent: string(r.Intent), Confidence: r.Confidence, Source: r.Source}
		}
		m.Entry = &arbiterv1.HistoryEntry_Transcript{Transcript: ht}
	case e.Withdraw != nil:
		r := arbiterv1.CancellationReason_CANCELLATION_REASON_WITHDRAWN
		if e.Withdraw.Reason == arbiter.CancelProviderTimeout {
			r = arbiterv1.CancellationReason_CANCELLATION_REASON_PROVIDER_TIMEOUT
		}
		m.Entry = &arbiterv1.HistoryEntry_Withdraw{Withdraw: &arbiterv1.HistoryWithdraw{CallIds: e.Withdraw.CallIDs, Reason: r}}
	case e.Prepared != nil:
		m.Entry = &arbiterv1.HistoryEntry_Prepared{Prepared: &arbiterv1.HistoryJob{JobId: e.Prepared.Job}}
	case e.Complete != nil:
		hc := &arbiterv1.HistoryComplete{JobId: e.Complete.Job, Outcome: outcomePB[e.Complete.Outcome], Error: e.Complete.Error}
		if hc.Result, err = strct(e.Complete.Result); err != nil {
			return nil, err
		}
		if o := e.Complete.ResultOmitted; o != nil {
			if hc.ResultOmitted, err = strct(o.Payload()); err != nil {
				return nil, err
			}
		}
		m.Entry = &arbiterv1.HistoryEntry_Complete{Complete: hc}
	case e.Configure != nil:
		c := e.Configure
		m.Entry = &arbiterv1.HistoryEntry_Configure{Configure: &arbiterv1.HistoryConfigure{
			Language: c.Language, TimeZone: c.TimeZone, ResponseScheduling: c.ResponseScheduling, Record: c.Record}}
	case e.Connect != nil:
		m.Entry = &arbiterv1.HistoryEntry_Connect{Connect: &arbiterv1.HistoryConnect{
			ConnectionId: e.Connect.ID, State: sessionStatePB[e.Connect.State]}}
	case e.Progress != nil:
		hp := &arbiterv1.HistoryProgress{JobId: e.Progress.Job}
		if hp.Result, err = strct(e.Progress.Result); err != nil {
			return nil, err
		}
		m.Entry = &arbiterv1.HistoryEntry_Progress{Progress: hp}
	case e.Close != nil:
		m.Entry = &arbiterv1.HistoryEntry_Close{Close: &arbiterv1.HistoryClose{}}
	case e.Decision != nil:
		d := e.Decision
		m.Entry = &arbiterv1.HistoryEntry_Decision{Decision: &arbiterv1.HistoryDecision{
			JobId: d.Job, Decision: decisionPB(d.Decision), Cause: string(d.Cause), Reason: d.Reason}}
	case e.Revoked != nil:
		m.Entry = &arbiterv1.HistoryEntry_Revoked{Revoked: &arbiterv1.HistoryJob{JobId: e.Revoked.Job}}
	case e.Answered != nil:
		m.Entry = &arbiterv1.HistoryEntry_Answered{Answered: &arbiterv1.HistoryJob{JobId: e.Answered.Job}}
	case e.Hold != nil:
		h := e.Hold
		m.Entry = &arbiterv1.HistoryEntry_Hold{Hold: &arbiterv1.HistoryHold{
			JobId: h.Job, Utterance: int32(h.Utterance), Abandoned: h.Utterance == 0, End: h.End}}
	default:
		return nil, arbiter.Errorf(arbiter.Internal, "history entry at %d ms holds no kind", e.MS)
	}
	return m, nil
}

var outcomePB = map[arbiter.Outcome]arbiterv1.Outcome{
	arbiter.Committed: arbiterv1.Outcome_OUTCOME_COMMITTED,
	arbiter.Cancelled: arbiterv1.Outcome_OUTCOME_CANCELLED,
	arbiter.Failed:    arbiterv1.Outcome_OUTCOME_FAILED,
	arbiter.Result:    arbiterv1.Outcome_OUTCOME_RESULT,
	arbiter.Unknown:   arbiterv1.Outcome_OUTCOME_UNKNOWN,
}

func decisionPB(d arbiter.Decision) arbiterv1.Decision {
	switch d {
	case arbiter.DecisionCommit:
		return arbiterv1.Decision_DECISION_COMMIT
	case arbiter.DecisionCancel:
		return arbiterv1.Decision_DECISION_CANCEL
	}
	return arbiterv1.Decision_DECISION_PENDING
}
