// Package sessioncodec encodes a session (arbiter.Session) as the record a store
// keeps, and decodes every record format a store may hold.
//
// # Formats
//
// A record's first byte names its format:
//
//   - 0x02: FormatProtoS2, what Encode writes: the byte, then the S2 block encoding
//     (github.com/klauspost/compress/s2, block format, no dictionary) of an
//     arbiter.store.v1.Session message, the message FormatProto holds. bench/soak's
//     idle session is 957 B in FormatProto and 669 B in FormatProtoS2; S2
//     costs about a microsecond each way, under a tenth of the protobuf (issue 16). Encode
//     writes FormatProto instead for a message S2 does not shrink. Replicas of
//     versions before FormatProtoS2 (2026-12-01) refuse it (unknown record format):
//     EncodeProto writes what they read, for a rolling upgrade
//     (redisstore.Options.LegacyRecords, serve --redis-legacy-records).
//   - 0x01: FormatProto, what Encode wrote before FormatProtoS2 (and still writes
//     when S2 does not pay): the byte, then an arbiter.store.v1.Session message
//     (proto/arbiter/store/v1/session.proto). bench/soak's idle session is 38 % of its
//     JSON size (993 B), and encodes 1.5 and decodes 2.5 times faster (issue 16).
//   - '{': the JSON of arbiter.EncodeSession, which every store wrote before FormatProto.
//     Decode still reads it, so during a rolling upgrade new replicas read what old
//     ones write; a session is rewritten by its next change. Replicas of versions
//     before FormatProto read nothing else: redisstore.Options.JSONRecords (serve
//     --redis-json-records) has new ones write it until the old ones are gone.
//
// A record starting with any other control byte is refused (Internal: a format of a
// later version); anything else is read as JSON, which has no format byte (so a
// malformed JSON record fails with JSON's own error, as before). A future format
// takes the next control byte; its readers keep reading these.
//
// Protobuf (rather than a hand-written binary layout) because its field numbers make
// the record evolve as the session does: a field added to arbiter.Session is a new
// field number, which older replicas skip and newer ones read as its zero value, with
// no format change. The JSON-shaped values inside a session (arguments, payloads,
// results: map[string]any) stay JSON inside the message: that is what they are on
// the wire, and decoding them gives exactly the float64 numbers and nested maps the
// JSON record gave. S2 on top takes what protobuf repeats: the ids, tool names,
// reasons and enumeration strings a session names in its calls, jobs, effect log and
// history (a job id is in seven places of an idle session), and JSON's key names.
// S2 rather than zstd or DEFLATE: on a 1 KB record those compress 5 to 15 % more
// but take 15 to 60 µs to (zstd with a dictionary, which would take 45 % off, over
// 70 µs), more than the protobuf encoding itself; S2 takes about 1 µs.
package sessioncodec

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"
	"google.golang.org/protobuf/proto"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
	pb "github.com/voicearbiter/arbiter/proto/arbiter/store/v1"
)

// The first byte of a record.
const (
	// FormatProtoS2 is the format Encode writes: an S2 block of a FormatProto message.
	FormatProtoS2 byte = 0x02
	// FormatProto is a protobuf message as it is: what EncodeProto writes (and Encode
	// when S2 does not shrink the message).
	FormatProto byte = 0x01
	// FormatJSON is the first byte of a JSON record (arbiter.EncodeSession).
	FormatJSON byte = '{'
)

// Encode encodes s for a store in FormatProtoS2, or in FormatProto when S2 does not
// make it shorter. The Version field is not part of the record (the store keeps it
// beside it). A session holding a string that is not valid UTF-8 (which protobuf
// refuses; the engine clips text on rune boundaries, so this is a safety net) is
// written as JSON instead, as before FormatProto: JSON replaces the invalid bytes with
// U+FFFD. The record is the caller's, allocated at its length (a store that keeps it
// keeps no slack). Errors: Internal when a JSON-shaped value does not encode. s is
// only read: Encode is safe for concurrent use as long as nobody writes s meanwhile.
func Encode(s *arbiter.Session) ([]byte, error) {
	msgp, zp := scratch.Get().(*[]byte), scratch.Get().(*[]byte)
	defer release(msgp)
	defer release(zp)
	msg, err := appendProto((*msgp)[:0], s)
	if err != nil {
		return nil, err
	}
	if msg[0] != FormatProto { // JSON, for invalid UTF-8, in a buffer of its own
		return msg, nil
	}
	*msgp = msg // the pool keeps it, grown
	if n := s2.MaxEncodedLen(len(msg) - 1); n > 0 {
		if cap(*zp) < n {
			*zp = make([]byte, n)
		}
		if z := s2.Encode((*zp)[:n], msg[1:]); 1+len(z) < len(msg) {
			rec := make([]byte, 1+len(z))
			rec[0] = FormatProtoS2
			copy(rec[1:], z)
			return rec, nil
		}
	}
	rec := make([]byte, len(msg))
	copy(rec, msg)
	return rec, nil
}

// scratch holds the buffers Encode writes the message and its S2 block into before
// it copies the record out at its length (so that a store keeping the record keeps
// no slack); release drops one over 1 MiB instead of pooling it.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func release(b *[]byte) {
	if cap(*b) <= 1<<20 {
		scratch.Put(b)
	}
}

// EncodeProto encodes s in FormatProto, what Encode wrote before FormatProtoS2 and
// the only protobuf format versions before it read (for a rolling upgrade from such
// a version: redisstore.Options.LegacyRecords); as Encode, a session with a string
// that is not valid UTF-8 is written as JSON. Errors and concurrency: as Encode's.
func EncodeProto(s *arbiter.Session) ([]byte, error) {
	return appendProto(nil, s)
}

// appendProto appends s in FormatProto to buf (or, for invalid UTF-8, returns its
// JSON in a buffer of its own).
func appendProto(buf []byte, s *arbiter.Session) ([]byte, error) {
	e := encoder{base: timeBase(s.CreatedAt), log: s.Log}
	m := e.session(s)
	if e.err != nil {
		return buf, arbiter.Wrap(arbiter.Internal, e.err, "encode session %q", s.Key.ID)
	}
	o := proto.MarshalOptions{}
	if n := 1 + o.Size(m); cap(buf)-len(buf) < n {
		buf = append(make([]byte, 0, len(buf)+n), buf...)
	}
	start := len(buf)
	buf = append(buf, FormatProto)
	buf, err := o.MarshalAppend(buf, m)
	if err != nil {
		if js, jerr := arbiter.EncodeSession(s); jerr == nil {
			return js, nil // invalid UTF-8 (the only error a well-formed message can give)
		}
		return buf[:start], arbiter.Wrap(arbiter.Internal, err, "encode session %q", s.Key.ID)
	}
	return buf, nil
}

// EncodeJSON encodes s in FormatJSON, what stores wrote before FormatProto (for a
// rolling upgrade from such a version: redisstore.Options.JSONRecords). Errors:
// Internal when s does not encode.
func EncodeJSON(s *arbiter.Session) ([]byte, error) {
	b, err := arbiter.EncodeSession(s)
	if err != nil {
		return nil, arbiter.Wrap(arbiter.Internal, err, "encode session %q", s.Key.ID)
	}
	return b, nil
}

// maxDecoded bounds the length a FormatProtoS2 record may claim its message has
// (256 MiB, half of the largest Redis string): a malformed length is refused rather
// than allocated.
const maxDecoded = 256 << 20

// Decode decodes a record in any format this package reads (FormatProtoS2,
// FormatProto, FormatJSON). The session returned is the caller's and does not alias
// b; its Version is 0 (the store sets it). Errors: Internal for an empty, malformed or
// unknown-format record.
func Decode(b []byte) (*arbiter.Session, error) {
	if len(b) == 0 {
		return nil, arbiter.Errorf(arbiter.Internal, "decode session: empty record")
	}
	switch b[0] {
	case FormatProtoS2:
		n, err := s2.DecodedLen(b[1:])
		if err == nil && n > maxDecoded {
			err = fmt.Errorf("the record claims %d B decoded, over the %d B bound", n, maxDecoded)
		}
		if err != nil {
			return nil, arbiter.Wrap(arbiter.Internal, err, "decode session")
		}
		bp := scratch.Get().(*[]byte) // protobuf copies what it keeps: the buffer goes back
		defer release(bp)
		if cap(*bp) < n {
			*bp = make([]byte, n)
		}
		msg, err := s2.Decode((*bp)[:n], b[1:])
		if err != nil {
			return nil, arbiter.Wrap(arbiter.Internal, err, "decode session")
		}
		return decodeProto(msg)
	case FormatProto:
		return decodeProto(b[1:])
	case '\t', '\n', '\r':
	default:
		if b[0] < 0x20 || b[0] >= 0x7f { // not how a JSON record can start
			return nil, arbiter.Errorf(arbiter.Internal, "decode session: unknown record format 0x%02x", b[0])
		}
	}
	return arbiter.DecodeSession(b)
}

// decodeProto decodes an arbiter.store.v1.Session message (without a format byte).
func decodeProto(b []byte) (*arbiter.Session, error) {
	m := new(pb.Session)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, arbiter.Wrap(arbiter.Internal, err, "decode session")
	}
	d := decoder{base: timeBase(fromUnixNano(m.CreatedAtUnixNano)), log: m.Log}
	s := d.session(m)
	if d.err != nil {
		return nil, arbiter.Wrap(arbiter.Internal, d.err, "decode session %q", s.Key.ID)
	}
	return s, nil
}

// JSON returns the record as JSON (FormatJSON), converting a protobuf one: for
// formats that embed the session as JSON (the embedded store's snapshot). Errors: as
// Decode's.
func JSON(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == FormatJSON {
		return b, nil
	}
	s, err := Decode(b)
	if err != nil {
		return nil, err
	}
	return arbiter.EncodeSession(s)
}

// Times are nanoseconds relative to the session's CreatedAt, shifted by one so that 0
// is the zero time (see session.proto).
func relTime(base, t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	d := t.Sub(base).Nanoseconds()
	if d >= 0 && d < math.MaxInt64 {
		return d + 1
	}
	return d
}

func absTime(base time.Time, v int64) time.Time {
	switch {
	case v == 0:
		return time.Time{}
	case v > 0:
		return base.Add(time.Duration(v - 1))
	}
	return base.Add(time.Duration(v))
}

// timeBase is what a session's times are relative to: its CreatedAt, or the Unix
// epoch for a session without one.
func timeBase(createdAt time.Time) time.Time {
	if createdAt.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return createdAt
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

type encoder struct {
	base time.Time
	log  []arbiter.LogEntry
	err  error
}

// logged returns the session's log entry with sequence number seq, or nil.
func logged(log []arbiter.LogEntry, seq uint64) *arbiter.LogEntry {
	if len(log) == 0 || seq < log[0].Seq || seq-log[0].Seq >= uint64(len(log)) {
		return nil
	}
	x := &log[seq-log[0].Seq]
	if x.Seq != seq {
		return nil
	}
	return x
}

// completionSeqs returns the Seqs of c's effects when every one of them is the log
// entry with its Seq, or nil.
func (e *encoder) completionSeqs(c *arbiter.Effects) []uint64 {
	n := len(c.Responses) + len(c.Skips) + len(c.Notes) + len(c.Runs)
	if n == 0 {
		return nil
	}
	seqs := make([]uint64, 0, n)
	for i := range c.Responses {
		x := logged(e.log, c.Responses[i].Seq)
		if x == nil || x.Response == nil || !reflect.DeepEqual(*x.Response, c.Responses[i]) {
			return nil
		}
		seqs = append(seqs, x.Seq)
	}
	for i := range c.Skips {
		x := logged(e.log, c.Skips[i].Seq)
		if x == nil || x.Skip == nil || *x.Skip != c.Skips[i] {
			return nil
		}
		seqs = append(seqs, x.Seq)
	}
	for i := range c.Notes {
		x := logged(e.log, c.Notes[i].Seq)
		if x == nil || x.Note == nil || *x.Note != c.Notes[i] {
			return nil
		}
		seqs = append(seqs, x.Seq)
	}
	for i := range c.Runs {
		x := logged(e.log, c.Runs[i].Seq)
		if x == nil || x.Run == nil || *x.Run != c.Runs[i] {
			return nil
		}
		seqs = append(seqs, x.Seq)
	}
	return seqs
}

func (e *encoder) t(t time.Time) int64 { return relTime(e.base, t) }

func (e *encoder) json(v map[string]any) []byte {
	if v == nil {
		return nil
	}
	if b, ok := arbiter.AppendJSON(nil, v); ok {
		return b // json.Marshal's bytes, without reflection
	}
	b, err := json.Marshal(v)
	if err != nil && e.err == nil {
		e.err = err
	}
	return b
}

func readingPB(r *speech.AgentReading) *pb.Reading {
	if r == nil {
		return nil
	}
	return &pb.Reading{Intent: string(r.Intent), Confidence: r.Confidence, Source: r.Source}
}

func reading(r *pb.Reading) *speech.AgentReading {
	if r == nil {
		return nil
	}
	return &speech.AgentReading{Intent: speech.Intent(r.Intent), Confidence: r.Confidence, Source: r.Source}
}

func omissionPB(o *arbiter.ResultOmission) *pb.ResultOmission {
	if o == nil {
		return nil
	}
	return &pb.ResultOmission{Reason: o.Reason, Bytes: int64(o.Bytes), MaxBytes: int64(o.MaxBytes), MaxDepth: int64(o.MaxDepth),
		Message: o.Message, Digest: o.Digest}
}

func omission(o *pb.ResultOmission) *arbiter.ResultOmission {
	if o == nil {
		return nil
	}
	return &arbiter.ResultOmission{Reason: o.Reason, Bytes: int(o.Bytes), MaxBytes: int(o.MaxBytes), MaxDepth: int(o.MaxDepth),
		Message: o.Message, Digest: o.Digest}
}

func ints(v []int) []int64 {
	if len(v) == 0 {
		return nil
	}
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func (e *encoder) session(s *arbiter.Session) *pb.Session {
	m := &pb.Session{
		Tenant:             s.Key.Tenant,
		Id:                 s.Key.ID,
		CreatedAtUnixNano:  unixNano(s.CreatedAt),
		Epoch:              s.Epoch,
		Now:                e.t(s.Now),
		Closed:             s.Closed,
		Language:           s.Language,
		TimeZone:           s.TimeZone,
		ResponseScheduling: s.ResponseScheduling,
		Seq:                int64(s.Seq),
		JobSeq:             int64(s.JobSeq),
		RunSeq:             int64(s.RunSeq),
		ModelSpeaking:      s.ModelSpeaking,
		LastNowNoteAt:      e.t(s.LastNowNoteAt),
		Connection:         s.Connection,
		PastConnections:    s.PastConnections,
		EventIds:           s.EventIDs,
		LogSeq:             s.LogSeq,
	}
	if ms := s.ModelSaid; ms != (arbiter.ModelSaid{}) {
		m.ModelSaid = &pb.ModelSaid{Text: ms.Text, At: e.t(ms.At)}
	}
	if tj := s.ModelTurns; tj != (speech.TurnJoiner{}) {
		m.ModelTurns = &pb.TurnJoiner{WindowNs: int64(tj.Window), Open: tj.Open, Start: e.t(tj.Start), Text: tj.Text,
			Joined: tj.Joined, JoinOnNext: tj.JoinOnNext}
		if h := tj.Held; h != nil {
			m.ModelTurns.Held = &pb.ModelTurn{Start: e.t(h.Start), End: e.t(h.End), Text: h.Text, Joined: h.Joined, Cut: h.Cut}
		}
	}
	if len(s.Utterances) > 0 {
		m.Utterances = make([]*pb.Utterance, len(s.Utterances))
		for i, u := range s.Utterances {
			m.Utterances[i] = &pb.Utterance{Id: int64(u.ID), ProviderId: u.ProviderID, Start: e.t(u.Start), End: e.t(u.End),
				Text: u.Text, Interim: u.Interim, Final: u.Final, Intent: string(u.Intent), Stop: u.Stop, Echo: u.Echo,
				Reading: readingPB(u.Reading), ReadBy: u.ReadBy}
		}
	}
	if len(s.Calls) > 0 {
		m.Calls = make([]*pb.Call, len(s.Calls))
		for i, c := range s.Calls {
			pc := &pb.Call{Id: c.ID, Tool: c.Tool, JobId: c.JobID, Behavior: string(c.Behavior), RegisteredAt: e.t(c.RegisteredAt),
				Disposition: string(c.Disposition), DuplicateOf: c.DuplicateOf, RunId: c.RunID, Connection: c.Connection,
				ArgsDigest: c.ArgsDigest}
			if o := c.Outcome; o != nil {
				pc.Outcome = &pb.CallOutcome{At: e.t(o.At), Dead: o.Dead, Reason: string(o.Reason), Seq: o.Seq}
				if x := logged(e.log, o.Seq); o.Response != nil && x != nil && x.Response != nil && reflect.DeepEqual(x.Response.Payload, o.Response) {
					pc.Outcome.ResponseLogged = true
				} else {
					pc.Outcome.ResponseJson = e.json(o.Response)
				}
			}
			m.Calls[i] = pc
		}
	}
	if len(s.Jobs) > 0 {
		m.Jobs = make([]*pb.Job, len(s.Jobs))
		for i, j := range s.Jobs {
			pj := &pb.Job{Id: j.ID, Tool: j.Tool, Key: j.Key, SideEffect: j.SideEffect, CallIds: j.CallIDs, ArgsJson: e.json(j.Args),
				CreatedAt: e.t(j.CreatedAt), Triggers: ints(j.Triggers), Released: ints(j.Released), PreparedAt: e.t(j.PreparedAt),
				Abandoned: j.Abandoned, AbandonedAt: e.t(j.AbandonedAt), AbandonLifted: j.AbandonLifted, Withdrawn: j.Withdrawn,
				Decision: string(j.Decision), Cause: string(j.Cause), Reason: j.Reason, DecidedAt: e.t(j.DecidedAt),
				CommitsRevoked: int64(j.CommitsRevoked), StopAfterCommit: j.StopAfterCommit, AmendAfterCommit: j.AmendAfterCommit,
				AmendText: j.AmendText, Outcome: string(j.Outcome), CompletedAt: e.t(j.CompletedAt), ResultJson: e.json(j.Result),
				Error: j.Error, TimedOut: j.TimedOut, NoteIssued: j.NoteIssued, RunId: j.RunID, WasUnknown: j.WasUnknown,
				ResultOmitted: omissionPB(j.ResultOmitted), SupersededBy: j.SupersededBy, Asked: j.Asked, Unguarded: j.Unguarded,
				QuestionAt: e.t(j.QuestionAt), QuestionBy: int64(j.QuestionBy), QuestionOpen: j.QuestionOpen, AnsweredBy: int64(j.AnsweredBy),
				AnsweredAt: e.t(j.AnsweredAt), WithheldUntil: e.t(j.WithheldUntil), LateCommit: j.LateCommit}
			if c := j.Completion; c != nil {
				if pj.CompletionSeqs = e.completionSeqs(c); pj.CompletionSeqs == nil {
					pj.Completion = e.effects(c)
				}
			}
			m.Jobs[i] = pj
		}
	}
	if len(s.Runs) > 0 {
		m.Runs = make([]*pb.Run, len(s.Runs))
		for i, r := range s.Runs {
			m.Runs[i] = &pb.Run{Id: r.ID, Tool: r.Tool, ArgsJson: e.json(r.Args), BusinessKey: r.BusinessKey, AnswersJson: e.json(r.Answers),
				CallIds: r.CallIDs, OpenedAt: e.t(r.OpenedAt), LastAt: e.t(r.LastAt), Asks: int64(r.Asks), State: string(r.State),
				Reason: r.Reason, EndedAt: e.t(r.EndedAt), JobId: r.JobID}
		}
	}
	if len(s.Log) > 0 {
		m.Log = make([]*pb.LogEntry, len(s.Log))
		for i, x := range s.Log {
			pl := &pb.LogEntry{Seq: x.Seq, At: e.t(x.At)}
			if x.Response != nil {
				pl.Response = e.response(x.Response)
			}
			if x.Skip != nil {
				pl.Skip = skip(x.Skip)
			}
			if x.Note != nil {
				pl.Note = note(x.Note)
			}
			if x.Run != nil {
				pl.Run = e.runUpdate(x.Run)
			}
			m.Log[i] = pl
		}
	}
	if h := s.History; h != nil {
		m.History = e.history(h)
	}
	return m
}

func (e *encoder) response(r *arbiter.Response) *pb.Response {
	return &pb.Response{CallId: r.CallID, Name: r.Name, JobId: r.JobID, PayloadJson: e.json(r.Payload), Interim: r.Interim, Seq: r.Seq}
}

func skip(s *arbiter.Skip) *pb.Skip {
	return &pb.Skip{CallId: s.CallID, Name: s.Name, JobId: s.JobID, Reason: string(s.Reason), Seq: s.Seq}
}

func note(n *arbiter.Note) *pb.Note {
	return &pb.Note{JobId: n.JobID, Text: n.Text, Deliver: string(n.Deliver), Via: string(n.Via), CallId: n.CallID,
		Scheduling: string(n.Scheduling), Why: n.Why, RunId: n.RunID, Seq: n.Seq}
}

func (e *encoder) runUpdate(u *arbiter.RunUpdate) *pb.RunUpdate {
	return &pb.RunUpdate{RunId: u.RunID, Tool: u.Tool, State: string(u.State), CallId: u.CallID, JobId: u.JobID, Reason: u.Reason,
		At: e.t(u.At), Seq: u.Seq}
}

func (e *encoder) effects(x *arbiter.Effects) *pb.Effects {
	m := &pb.Effects{}
	for i := range x.Responses {
		m.Responses = append(m.Responses, e.response(&x.Responses[i]))
	}
	for i := range x.Skips {
		m.Skips = append(m.Skips, skip(&x.Skips[i]))
	}
	for i := range x.Notes {
		m.Notes = append(m.Notes, note(&x.Notes[i]))
	}
	for i := range x.Runs {
		m.Runs = append(m.Runs, e.runUpdate(&x.Runs[i]))
	}
	return m
}

func (e *encoder) history(h *arbiter.History) *pb.History {
	m := &pb.History{Record: h.Record, Policy: h.Policy, Partial: h.Partial, Bytes: int64(h.Bytes), Dropped: int64(h.Dropped)}
	if len(h.Holds) > 0 {
		m.Holds = make([]*pb.Hold, len(h.Holds))
		for i, x := range h.Holds {
			m.Holds[i] = &pb.Hold{Job: x.Job, Utterance: int64(x.Utterance), Since: e.t(x.Since)}
		}
	}
	if len(h.Entries) > 0 {
		m.Entries = make([]*pb.HistoryEntry, len(h.Entries))
		for i := range h.Entries {
			m.Entries[i] = e.entry(&h.Entries[i])
		}
	}
	return m
}

func (e *encoder) entry(x *arbiter.HistoryEntry) *pb.HistoryEntry {
	m := &pb.HistoryEntry{Ms: x.MS, ObservedMs: x.ObservedMS, Seq: x.Seq, Clipped: x.Clipped, Close: x.Close != nil}
	if c := x.Call; c != nil {
		m.Call = &pb.CallEntry{Id: c.ID, Minted: c.Minted, Tool: c.Tool, ArgsJson: e.json(c.Args), RawArgs: c.RawArgs,
			Behavior: string(c.Behavior), ToolChoiceNone: c.ToolChoiceNone, BusinessKey: c.BusinessKey,
			Disposition: string(c.Disposition), Job: c.Job, Run: c.Run, DuplicateOf: c.DuplicateOf, JobTool: c.JobTool,
			SideEffect: c.SideEffect}
	}
	if s := x.Speech; s != nil {
		m.Speech = &pb.SpeechEntry{Kind: string(s.Kind), UtteranceId: s.UtteranceID, Utterance: int64(s.Utterance)}
	}
	if t := x.Transcript; t != nil {
		m.Transcript = &pb.TranscriptEntry{Model: t.Model, Text: t.Text, Interim: t.Interim, UtteranceId: t.UtteranceID,
			Utterance: int64(t.Utterance), Intent: string(t.Intent), Discarded: t.Discarded, Reading: readingPB(t.Reading)}
	}
	if w := x.Withdraw; w != nil {
		m.Withdraw = &pb.WithdrawEntry{CallIds: w.CallIDs, Reason: string(w.Reason)}
	}
	if j := x.Prepared; j != nil {
		m.Prepared = &pb.JobEntry{Job: j.Job}
	}
	if c := x.Complete; c != nil {
		m.Complete = &pb.CompleteEntry{Job: c.Job, Outcome: string(c.Outcome), ResultJson: e.json(c.Result), Error: c.Error,
			ResultOmitted: omissionPB(c.ResultOmitted)}
	}
	if c := x.Configure; c != nil {
		m.Configure = &pb.ConfigureEntry{Language: c.Language, TimeZone: c.TimeZone, ResponseScheduling: c.ResponseScheduling, Record: c.Record}
	}
	if c := x.Connect; c != nil {
		m.Connect = &pb.ConnectEntry{Id: c.ID, State: string(c.State)}
	}
	if p := x.Progress; p != nil {
		m.Progress = &pb.ProgressEntry{Job: p.Job, ResultJson: e.json(p.Result)}
	}
	if d := x.Decision; d != nil {
		m.Decision = &pb.DecisionEntry{Job: d.Job, Decision: string(d.Decision), Cause: string(d.Cause), Reason: d.Reason}
	}
	if j := x.Answered; j != nil {
		m.Answered = &pb.JobEntry{Job: j.Job}
	}
	if j := x.Revoked; j != nil {
		m.Revoked = &pb.JobEntry{Job: j.Job}
	}
	if h := x.Hold; h != nil {
		m.Hold = &pb.HoldEntry{Job: h.Job, Utterance: int64(h.Utterance), End: h.End}
	}
	return m
}

type decoder struct {
	base time.Time
	log  []*pb.LogEntry
	err  error
}

// logged returns the log entry with sequence number seq, or nil (and records the
// error: the record names an entry it does not hold).
func (d *decoder) logged(seq uint64) *pb.LogEntry {
	if n := len(d.log); n > 0 && seq >= d.log[0].Seq && seq-d.log[0].Seq < uint64(n) {
		if x := d.log[seq-d.log[0].Seq]; x.Seq == seq {
			return x
		}
	}
	if d.err == nil {
		d.err = fmt.Errorf("the record refers to log entry %d, which it does not hold", seq)
	}
	return nil
}

// completion rebuilds a Completion stored as log Seqs.
func (d *decoder) completion(seqs []uint64) *arbiter.Effects {
	c := &arbiter.Effects{}
	for _, seq := range seqs {
		x := d.logged(seq)
		switch {
		case x == nil:
		case x.Response != nil:
			c.Responses = append(c.Responses, d.response(x.Response))
		case x.Skip != nil:
			c.Skips = append(c.Skips, fromSkip(x.Skip))
		case x.Note != nil:
			c.Notes = append(c.Notes, fromNote(x.Note))
		case x.Run != nil:
			c.Runs = append(c.Runs, d.runUpdate(x.Run))
		}
	}
	return c
}

func (d *decoder) t(v int64) time.Time { return absTime(d.base, v) }

func (d *decoder) json(b []byte) map[string]any {
	if len(b) == 0 {
		return nil
	}
	v, err := decodeJSONObject(b) // json.Unmarshal, through the memo (jsonmemo.go)
	if err != nil && d.err == nil {
		d.err = err
	}
	return v
}

func fromInts(v []int64) []int {
	if len(v) == 0 {
		return nil
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func strs(v []string) []string {
	if len(v) == 0 {
		return nil
	}
	return v
}

func (d *decoder) session(m *pb.Session) *arbiter.Session {
	s := &arbiter.Session{
		Key:                arbiter.SessionKey{Tenant: m.Tenant, ID: m.Id},
		CreatedAt:          fromUnixNano(m.CreatedAtUnixNano),
		Epoch:              m.Epoch,
		Now:                d.t(m.Now),
		Closed:             m.Closed,
		Language:           m.Language,
		TimeZone:           m.TimeZone,
		ResponseScheduling: m.ResponseScheduling,
		Seq:                int(m.Seq),
		JobSeq:             int(m.JobSeq),
		RunSeq:             int(m.RunSeq),
		ModelSpeaking:      m.ModelSpeaking,
		LastNowNoteAt:      d.t(m.LastNowNoteAt),
		Connection:         m.Connection,
		PastConnections:    strs(m.PastConnections),
		EventIDs:           strs(m.EventIds),
		LogSeq:             m.LogSeq,
	}
	if ms := m.ModelSaid; ms != nil {
		s.ModelSaid = arbiter.ModelSaid{Text: ms.Text, At: d.t(ms.At)}
	}
	if tj := m.ModelTurns; tj != nil {
		s.ModelTurns = speech.TurnJoiner{Window: time.Duration(tj.WindowNs), Open: tj.Open, Start: d.t(tj.Start), Text: tj.Text,
			Joined: tj.Joined, JoinOnNext: tj.JoinOnNext}
		if h := tj.Held; h != nil {
			s.ModelTurns.Held = &speech.ModelTurn{Start: d.t(h.Start), End: d.t(h.End), Text: h.Text, Joined: h.Joined, Cut: h.Cut}
		}
	}
	if len(m.Utterances) > 0 {
		s.Utterances = make([]*arbiter.Utterance, len(m.Utterances))
		us := make([]arbiter.Utterance, len(m.Utterances))
		for i, u := range m.Utterances {
			us[i] = arbiter.Utterance{ID: int(u.Id), ProviderID: u.ProviderId, Start: d.t(u.Start), End: d.t(u.End), Text: u.Text,
				Interim: u.Interim, Final: u.Final, Intent: speech.Intent(u.Intent), Stop: u.Stop, Echo: u.Echo,
				Reading: reading(u.Reading), ReadBy: u.ReadBy}
			s.Utterances[i] = &us[i]
		}
	}
	if len(m.Calls) > 0 {
		s.Calls = make([]*arbiter.Call, len(m.Calls))
		cs := make([]arbiter.Call, len(m.Calls))
		for i, c := range m.Calls {
			cs[i] = arbiter.Call{ID: c.Id, Tool: c.Tool, JobID: c.JobId, Behavior: arbiter.Behavior(c.Behavior),
				RegisteredAt: d.t(c.RegisteredAt), Disposition: arbiter.Disposition(c.Disposition), DuplicateOf: c.DuplicateOf,
				RunID: c.RunId, Connection: c.Connection, ArgsDigest: c.ArgsDigest}
			if o := c.Outcome; o != nil {
				cs[i].Outcome = &arbiter.CallOutcome{At: d.t(o.At), Response: d.json(o.ResponseJson), Dead: o.Dead,
					Reason: arbiter.SkipReason(o.Reason), Seq: o.Seq}
				if o.ResponseLogged {
					if x := d.logged(o.Seq); x != nil && x.Response != nil {
						cs[i].Outcome.Response = d.json(x.Response.PayloadJson)
					}
				}
			}
			s.Calls[i] = &cs[i]
		}
	}
	if len(m.Jobs) > 0 {
		s.Jobs = make([]*arbiter.Job, len(m.Jobs))
		for i, j := range m.Jobs {
			sj := &arbiter.Job{ID: j.Id, Tool: j.Tool, Key: j.Key, SideEffect: j.SideEffect, CallIDs: strs(j.CallIds),
				Args: d.json(j.ArgsJson), CreatedAt: d.t(j.CreatedAt), Triggers: fromInts(j.Triggers), Released: fromInts(j.Released),
				PreparedAt: d.t(j.PreparedAt), Abandoned: j.Abandoned, AbandonedAt: d.t(j.AbandonedAt), AbandonLifted: j.AbandonLifted,
				Withdrawn: j.Withdrawn, Decision: arbiter.Decision(j.Decision), Cause: arbiter.Cause(j.Cause), Reason: j.Reason,
				DecidedAt: d.t(j.DecidedAt), CommitsRevoked: int(j.CommitsRevoked), StopAfterCommit: j.StopAfterCommit,
				AmendAfterCommit: j.AmendAfterCommit, AmendText: j.AmendText, Outcome: arbiter.Outcome(j.Outcome),
				CompletedAt: d.t(j.CompletedAt), Result: d.json(j.ResultJson), Error: j.Error, TimedOut: j.TimedOut,
				NoteIssued: j.NoteIssued, RunID: j.RunId, WasUnknown: j.WasUnknown, ResultOmitted: omission(j.ResultOmitted),
				SupersededBy: j.SupersededBy, Asked: j.Asked, Unguarded: j.Unguarded,
				QuestionAt: d.t(j.QuestionAt), QuestionBy: int(j.QuestionBy), QuestionOpen: j.QuestionOpen, AnsweredBy: int(j.AnsweredBy),
				AnsweredAt: d.t(j.AnsweredAt), WithheldUntil: d.t(j.WithheldUntil), LateCommit: j.LateCommit}
			if c := j.Completion; c != nil {
				sj.Completion = d.effects(c)
			} else if len(j.CompletionSeqs) > 0 {
				sj.Completion = d.completion(j.CompletionSeqs)
			}
			s.Jobs[i] = sj
		}
	}
	if len(m.Runs) > 0 {
		s.Runs = make([]*arbiter.Run, len(m.Runs))
		for i, r := range m.Runs {
			s.Runs[i] = &arbiter.Run{ID: r.Id, Tool: r.Tool, Args: d.json(r.ArgsJson), BusinessKey: r.BusinessKey,
				Answers: d.json(r.AnswersJson), CallIDs: strs(r.CallIds), OpenedAt: d.t(r.OpenedAt), LastAt: d.t(r.LastAt),
				Asks: int(r.Asks), State: arbiter.RunState(r.State), Reason: r.Reason, EndedAt: d.t(r.EndedAt), JobID: r.JobId}
		}
	}
	if len(m.Log) > 0 {
		s.Log = make([]arbiter.LogEntry, len(m.Log))
		for i, x := range m.Log {
			e := arbiter.LogEntry{Seq: x.Seq, At: d.t(x.At)}
			if x.Response != nil {
				r := d.response(x.Response)
				e.Response = &r
			}
			if x.Skip != nil {
				k := fromSkip(x.Skip)
				e.Skip = &k
			}
			if x.Note != nil {
				n := fromNote(x.Note)
				e.Note = &n
			}
			if x.Run != nil {
				u := d.runUpdate(x.Run)
				e.Run = &u
			}
			s.Log[i] = e
		}
	}
	if h := m.History; h != nil {
		s.History = d.history(h)
	}
	return s
}

func (d *decoder) response(r *pb.Response) arbiter.Response {
	return arbiter.Response{CallID: r.CallId, Name: r.Name, JobID: r.JobId, Payload: d.json(r.PayloadJson), Interim: r.Interim, Seq: r.Seq}
}

func fromSkip(s *pb.Skip) arbiter.Skip {
	return arbiter.Skip{CallID: s.CallId, Name: s.Name, JobID: s.JobId, Reason: arbiter.SkipReason(s.Reason), Seq: s.Seq}
}

func fromNote(n *pb.Note) arbiter.Note {
	return arbiter.Note{JobID: n.JobId, Text: n.Text, Deliver: arbiter.Delivery(n.Deliver), Via: arbiter.Via(n.Via), CallID: n.CallId,
		Scheduling: arbiter.Scheduling(n.Scheduling), Why: n.Why, RunID: n.RunId, Seq: n.Seq}
}

func (d *decoder) runUpdate(u *pb.RunUpdate) arbiter.RunUpdate {
	return arbiter.RunUpdate{RunID: u.RunId, Tool: u.Tool, State: arbiter.RunState(u.State), CallID: u.CallId, JobID: u.JobId,
		Reason: u.Reason, At: d.t(u.At), Seq: u.Seq}
}

func (d *decoder) effects(m *pb.Effects) *arbiter.Effects {
	x := &arbiter.Effects{}
	for _, r := range m.Responses {
		x.Responses = append(x.Responses, d.response(r))
	}
	for _, k := range m.Skips {
		x.Skips = append(x.Skips, fromSkip(k))
	}
	for _, n := range m.Notes {
		x.Notes = append(x.Notes, fromNote(n))
	}
	for _, u := range m.Runs {
		x.Runs = append(x.Runs, d.runUpdate(u))
	}
	return x
}

func (d *decoder) history(m *pb.History) *arbiter.History {
	h := &arbiter.History{Record: m.Record, Policy: m.Policy, Partial: m.Partial, Bytes: int(m.Bytes), Dropped: int(m.Dropped)}
	if len(m.Holds) > 0 {
		h.Holds = make([]arbiter.Hold, len(m.Holds))
		for i, x := range m.Holds {
			h.Holds[i] = arbiter.Hold{Job: x.Job, Utterance: int(x.Utterance), Since: d.t(x.Since)}
		}
	}
	if len(m.Entries) > 0 {
		h.Entries = make([]arbiter.HistoryEntry, len(m.Entries))
		for i, x := range m.Entries {
			h.Entries[i] = d.entry(x)
		}
	}
	return h
}

func (d *decoder) entry(m *pb.HistoryEntry) arbiter.HistoryEntry {
	x := arbiter.HistoryEntry{MS: m.Ms, ObservedMS: m.ObservedMs, Seq: m.Seq, Clipped: m.Clipped}
	if m.Close {
		x.Close = &struct{}{}
	}
	if c := m.Call; c != nil {
		x.Call = &arbiter.CallEntry{ID: c.Id, Minted: c.Minted, Tool: c.Tool, Args: d.json(c.ArgsJson), RawArgs: c.RawArgs,
			Behavior: arbiter.Behavior(c.Behavior), ToolChoiceNone: c.ToolChoiceNone, BusinessKey: c.BusinessKey,
			Disposition: arbiter.Disposition(c.Disposition), Job: c.Job, Run: c.Run, DuplicateOf: c.DuplicateOf, JobTool: c.JobTool,
			SideEffect: c.SideEffect}
	}
	if s := m.Speech; s != nil {
		x.Speech = &arbiter.SpeechEntry{Kind: arbiter.SpeechKind(s.Kind), UtteranceID: s.UtteranceId, Utterance: int(s.Utterance)}
	}
	if t := m.Transcript; t != nil {
		x.Transcript = &arbiter.TranscriptEntry{Model: t.Model, Text: t.Text, Interim: t.Interim, UtteranceID: t.UtteranceId,
			Utterance: int(t.Utterance), Intent: speech.Intent(t.Intent), Discarded: t.Discarded, Reading: reading(t.Reading)}
	}
	if w := m.Withdraw; w != nil {
		x.Withdraw = &arbiter.WithdrawEntry{CallIDs: strs(w.CallIds), Reason: arbiter.CancelReason(w.Reason)}
	}
	if j := m.Prepared; j != nil {
		x.Prepared = &arbiter.JobEntry{Job: j.Job}
	}
	if c := m.Complete; c != nil {
		x.Complete = &arbiter.CompleteEntry{Job: c.Job, Outcome: arbiter.Outcome(c.Outcome), Result: d.json(c.ResultJson), Error: c.Error,
			ResultOmitted: omission(c.ResultOmitted)}
	}
	if c := m.Configure; c != nil {
		x.Configure = &arbiter.ConfigureEntry{Language: c.Language, TimeZone: c.TimeZone, ResponseScheduling: c.ResponseScheduling, Record: c.Record}
	}
	if c := m.Connect; c != nil {
		x.Connect = &arbiter.ConnectEntry{ID: c.Id, State: arbiter.ConnectState(c.State)}
	}
	if p := m.Progress; p != nil {
		x.Progress = &arbiter.ProgressEntry{Job: p.Job, Result: d.json(p.ResultJson)}
	}
	if c := m.Decision; c != nil {
		x.Decision = &arbiter.DecisionEntry{Job: c.Job, Decision: arbiter.Decision(c.Decision), Cause: arbiter.Cause(c.Cause), Reason: c.Reason}
	}
	if j := m.Answered; j != nil {
		x.Answered = &arbiter.JobEntry{Job: j.Job}
	}
	if j := m.Revoked; j != nil {
		x.Revoked = &arbiter.JobEntry{Job: j.Job}
	}
	if h := m.Hold; h != nil {
		x.Hold = &arbiter.HoldEntry{Job: h.Job, Utterance: int(h.Utterance), End: h.End}
	}
	return x
}
