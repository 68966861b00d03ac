package fakeprovider_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/voicearbiter/arbiter/fakeprovider"
	"github.com/voicearbiter/arbiter/replay"
)

// syntheticRef is a reference for the synthetic trace, as a replay would print it:
// fc_1 dead (abandoned by the barge-in), its re-issue fc_2 a duplicate answered with
// the job's commit, and one note.
const syntheticRef = `{"out":"call","t_ms":450,"call_id":"fc_1","disposition":"execute","job_id":"job-1"}
{"out":"skip","t_ms":500,"call_id":"fc_1","reason":"abandoned"}
{"out":"call","t_ms":600,"call_id":"fc_2","disposition":"duplicate","job_id":"job-1"}
{"out":"decision","t_ms":700,"call_id":"fc_1","job_id":"job-1","decision":"commit","reason":"no user speech in the grace window"}
{"out":"commit","t_ms":700,"job_id":"job-1"}
{"out":"response","t_ms":700,"call_id":"fc_2","payload":{"duplicate_of":"fc_1","status":"committed"}}
{"out":"note","t_ms":700,"job_id":"job-1","text":"System note: the booking for tomorrow at 3pm is confirmed.","deliver":"now"}
{"out":"summary","commits":1,"cancels":0,"double_commits":0,"calls":2,"answered":1,"skipped":1,"unanswered":[]}
`

const (
	recOpen  = `{"t_ms":0,"session":1,"conn":1,"trace":"synthetic","proto":"PROTO","kind":"open"}`
	recClose = `{"t_ms":1500,"session":1,"conn":1,"trace":"synthetic","proto":"PROTO","kind":"close","code":1000,"by":"server","end":true}`
	// Gemini client messages.
	gemAnswer2 = `{"t_ms":704,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_2","name":"book_slot","response":{"status":"committed","duplicate_of":"fc_1"}}]}}}`
	gemAnswer1 = `{"t_ms":705,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_1","name":"book_slot","response":{"status":"committed"}}]}}}`
	gemNote    = `{"t_ms":706,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"clientContent":{"turns":[{"role":"user","parts":[{"text":"System note: the booking for tomorrow at 3pm is confirmed."}]}],"turnComplete":true}}}`
	gemRider   = `{"t_ms":704,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_2","name":"book_slot","scheduling":"INTERRUPT","response":{"status":"committed","status_note":"System note: the booking for tomorrow at 3pm is confirmed."}}]}}}`
	gemOther   = `{"t_ms":900,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"clientContent":{"turns":[{"role":"user","parts":[{"text":"System note: the user's name is Dana."}]}],"turnComplete":true}}}`
	gemWrong   = `{"t_ms":704,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_2","name":"book_slot","response":{"output":{"status":"cancelled"}}}]}}}`
	gemStray   = `{"t_ms":800,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_9","name":"book_slot","response":{}}]}}}`
	// OpenAI client messages.
	oaiAnswer2 = `{"t_ms":703,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"fc_2","output":"{\"status\":\"committed\"}"}}}`
	oaiNote    = `{"t_ms":708,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"System note: the booking for tomorrow at 3pm is confirmed."}]}}}`
	// Backend log lines.
	commit1 = `{"out":"commit","t_ms":702,"job_id":"job-1"}`
	cancel1 = `{"out":"cancel","t_ms":702,"job_id":"job-1"}`
)

// checkRecord runs Check on the synthetic trace with record lines (PROTO stands for
// the protocol) and a backend log (nil: none).
func checkRecord(t *testing.T, proto string, record []string, backend []string) *fakeprovider.Report {
	t.Helper()
	tr := parseTrace(t, "synthetic", synthetic)
	ref, err := fakeprovider.ReadReference(strings.NewReader(syntheticRef), "ref")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, l := range record {
		text.WriteString(strings.ReplaceAll(l, "PROTO", proto) + "\n")
	}
	lines, err := fakeprovider.ReadRecord(strings.NewReader(text.String()), "record")
	if err != nil {
		t.Fatal(err)
	}
	in := fakeprovider.CheckInput{Stack: "test", References: []fakeprovider.Reference{{Trace: tr, Lines: ref}}, Record: lines}
	if backend != nil {
		in.Backend, err = fakeprovider.ReadBackendLog(strings.NewReader(strings.Join(backend, "\n")), "backend")
		if err != nil {
			t.Fatal(err)
		}
		if in.Backend == nil {
			in.Backend = []fakeprovider.BackendLine{}
		}
	}
	return fakeprovider.Check(in)
}

// TestCheckPasses: records that do what the reference does pass, whichever way the
// note goes out.
func TestCheckPasses(t *testing.T) {
	cases := []struct {
		name    string
		proto   string
		record  []string
		backend []string
		summary string
	}{
		{"gemini note as user turn", "gemini", []string{recOpen, gemAnswer2, gemNote, recClose}, []string{`not json`, commit1, `{"out":"summary"}`},
			"test: sessions 1, responses 1, dead ids answered 0, notes 1, commits 1, max decision offset 6ms, skipped 0"},
		{"gemini note riding on the response", "gemini", []string{recOpen, gemRider, recClose}, nil,
			"test: sessions 1, responses 1, dead ids answered 0, notes 1, commits 0, max decision offset 4ms, skipped 0"},
		{"openai", "openai", []string{recOpen, oaiAnswer2, oaiNote, recClose}, []string{commit1},
			"test: sessions 1, responses 1, dead ids answered 0, notes 1, commits 1, max decision offset 8ms, skipped 0"},
		// A reconnect: the agent replays its history, the note in it, on connection 2.
		{"note again as history on a later connection", "gemini", []string{recOpen, gemAnswer2, gemNote,
			`{"t_ms":900,"session":1,"conn":2,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"clientContent":{"turns":[{"role":"user","parts":[{"text":"Book me 3pm tomorrow."}]},{"role":"user","parts":[{"text":"System note: the booking for tomorrow at 3pm is confirmed."}]}],"turnComplete":false}}}`,
			recClose}, nil,
			"test: sessions 1, responses 1, dead ids answered 0, notes 1, commits 0, max decision offset 6ms, skipped 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkRecord(t, tc.proto, tc.record, tc.backend)
			if !rep.OK() {
				t.Fatalf("mismatches: %q", rep.Mismatches)
			}
			if got := rep.Summary(); got != tc.summary {
				t.Errorf("summary %q, want %q", got, tc.summary)
			}
		})
	}
}

// TestCheckFails: each wrong record fails with a message that says what is wrong.
func TestCheckFails(t *testing.T) {
	cases := []struct {
		name    string
		record  []string
		backend []string
		want    string
	}{
		{"dead id answered", []string{recOpen, gemAnswer2, gemAnswer1, gemNote, recClose}, nil,
			"fc_1 answered at 705 ms, but it is dead (abandoned): it must never be answered"},
		{"interim response to a dead id", []string{recOpen, gemInterimDead, gemAnswer2, gemNote, recClose}, nil,
			"fc_1 answered at 600 ms, but it is dead (abandoned): it must never be answered"},
		{"dead id answered before it died (a final answer)", []string{recOpen, strings.Replace(gemAnswer1, `"t_ms":705`, `"t_ms":460`, 1), gemAnswer2, gemNote, recClose}, nil,
			"fc_1 answered at 460 ms, but it is dead (abandoned): it must never be answered"},
		{"live id answered twice", []string{recOpen, gemAnswer2, gemAnswer2, gemNote, recClose}, nil,
			"fc_2 answered 2 times (at 704, 704 ms), the model holding them at once on connection 1; a call id gets exactly one response"},
		{"live id never answered", []string{recOpen, gemNote, recClose}, nil,
			"fc_2 is live and was never answered (the reference answers it at 700 ms)"},
		{"note sent twice", []string{recOpen, gemAnswer2, gemNote, gemNote, recClose}, nil,
			`note sent 2 times on connection 1, the model holding them at once; the reference hands it out 1: "System note: the booking for tomorrow at 3pm is confirmed."`},
		{"note sent twice, once riding", []string{recOpen, gemRider, gemNote, recClose}, nil, "note sent 2 times"},
		{"note never sent", []string{recOpen, gemAnswer2, recClose}, nil, "note never sent"},
		// A connection that resumes the session (its setup names the handle) holds what the
		// last one held: the note again there is a second copy, not history.
		{"note again on a resumed connection", []string{recOpen, gemAnswer2, gemNote,
			`{"t_ms":900,"session":1,"conn":2,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"setup":{"model":"m","sessionResumption":{"handle":"fake-session-1"}}}}`,
			strings.Replace(gemNote, `"conn":1`, `"conn":2`, 1), recClose}, nil,
			`note sent 2 times on connection 1, the model holding them at once (and connection 2, which resumed it)`},
		{"a note of its own", []string{recOpen, gemAnswer2, gemNote, gemOther, recClose}, nil,
			`a note the reference does not have, at 900 ms via clientContent: "System note: the user's name is Dana."`},
		{"wrong status", []string{recOpen, gemWrong, gemNote, recClose}, nil, `fc_2 answered with status "cancelled"; the reference's status is "committed"`},
		{"a call the trace never made", []string{recOpen, gemAnswer2, gemNote, gemStray, recClose}, nil, "a function response for fc_9, which the trace never called"},
		{"end never played", []string{recOpen, gemAnswer2, gemNote}, nil, "the trace's end was never played"},
		{"commit the reference does not make", []string{recOpen, gemAnswer2, gemNote, recClose}, []string{cancel1},
			"the reference commits job-1; the backend log has no commit for it"},
		{"double commit", []string{recOpen, gemAnswer2, gemNote, recClose}, []string{commit1, commit1}, "backend committed job-1 2 times"},
		{"commit of an unknown job", []string{recOpen, gemAnswer2, gemNote, recClose}, []string{commit1, `{"out":"commit","job_id":"job-7"}`},
			"backend committed job-7; the reference has no decision for it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkRecord(t, "gemini", tc.record, tc.backend)
			if rep.OK() {
				t.Fatalf("passed; want a mismatch %q", tc.want)
			}
			all := strings.Join(rep.Mismatches, "\n")
			if !strings.Contains(all, tc.want) {
				t.Fatalf("mismatches:\n%s\nwant one containing %q", all, tc.want)
			}
		})
	}
}

// TestCheckCancelledJob: the backend's cancel (or abort of the prepare) agrees with a
// reference that cancels; a commit does not.
func TestCheckCancelledJob(t *testing.T) {
	ref := strings.NewReplacer(`"decision":"commit"`, `"decision":"cancel"`, `{"out":"commit","t_ms":700,"job_id":"job-1"}`, `{"out":"cancel","t_ms":700,"job_id":"job-1"}`).Replace(syntheticRef)
	tr := parseTrace(t, "synthetic", synthetic)
	lines, _ := fakeprovider.ReadReference(strings.NewReader(ref), "ref")
	record, _ := fakeprovider.ReadRecord(strings.NewReader(strings.ReplaceAll(strings.Join([]string{
		recOpen, gemAnswer2, gemNote, recClose}, "\n"), "PROTO", "gemini")), "record")
	for _, tc := range []struct {
		backend string
		want    string
	}{
		{`{"out":"abort_prepare","job_id":"job-1"}`, ""},
		{cancel1, ""},
		{commit1, "backend committed job-1; the reference cancelled it (no user speech in the grace window)"},
	} {
		backend, _ := fakeprovider.ReadBackendLog(strings.NewReader(tc.backend), "backend")
		rep := fakeprovider.Check(fakeprovider.CheckInput{Stack: "t", References: []fakeprovider.Reference{{Trace: tr, Lines: lines}}, Record: record, Backend: backend})
		all := strings.Join(rep.Mismatches, "\n")
		if tc.want == "" && !rep.OK() || tc.want != "" && !strings.Contains(all, tc.want) {
			t.Errorf("backend %s: mismatches %q, want %q", tc.backend, all, tc.want)
		}
	}
}

// OpenAI lines of the judged-by-what-is-held tests: an answer and a note created with
// the client's own item ids, and their deletes.
const (
	oaiAnswerItem = `{"t_ms":703,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","item":{"id":"item_out","type":"function_call_output","call_id":"fc_2","output":"{\"status\":\"committed\"}"}}}`
	oaiAnswerDel  = `{"t_ms":720,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.delete","item_id":"item_out"}}`
	oaiAnswerMove = `{"t_ms":721,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","previous_item_id":"item_x","item":{"id":"item_out","type":"function_call_output","call_id":"fc_2","output":"{\"status\":\"committed\"}"}}}`
	oaiNoteItem   = `{"t_ms":708,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","item":{"id":"item_note","type":"message","role":"user","content":[{"type":"input_text","text":"System note: the booking for tomorrow at 3pm is confirmed."}]}}}`
	oaiNoteDel    = `{"t_ms":730,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.delete","item_id":"item_note"}}`
	oaiNoteMove   = `{"t_ms":731,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","item":{"id":"item_note","type":"message","role":"user","content":[{"type":"input_text","text":"System note: the booking for tomorrow at 3pm is confirmed."}]}}}`
	// An answer created without an id, named by the server's echo, then deleted by
	// that name.
	oaiAnswerNoID = `{"t_ms":703,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"fc_2","output":"{\"status\":\"committed\"}"}}}`
	oaiEcho       = `{"t_ms":703,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"server","msg":{"type":"conversation.item.added","item":{"id":"item_077","type":"function_call_output","call_id":"fc_2"}}}`
	oaiEchoDel    = `{"t_ms":725,"session":1,"conn":1,"trace":"synthetic","proto":"openai","kind":"client","msg":{"type":"conversation.item.delete","item_id":"item_077"}}`
	// Gemini interim responses for fc_1 (dead at 500 ms): before it died, after.
	gemInterimLive = `{"t_ms":460,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_1","name":"book_slot","response":{},"willContinue":true}]}}}`
	gemInterimDead = `{"t_ms":600,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"toolResponse":{"functionResponses":[{"id":"fc_1","name":"book_slot","response":{"status":"in_progress"},"willContinue":true}]}}}`
	// Gemini: one turn carrying two notes, the second a note of the reference too.
	gemTwoNotes = `{"t_ms":706,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"client","msg":{"clientContent":{"turns":[{"role":"user","parts":[{"text":"System note: the booking for tomorrow at 3pm is confirmed."},{"text":"System note: the user's name is Dana."}]}],"turnComplete":true}}}`
)

// TestCheckJudgesWhatIsHeld: the checker judges what the model ends up holding on each
// connection, not the count of sends: an OpenAI delete and re-create of the same
// answer or note (LiveKit's move) is one answer, one note; an answer deleted and never
// sent again leaves the id unanswered; an answer created without an id is named by the
// server's echo. A turn carrying two notes holds both (matching is not greedy).
func TestCheckJudgesWhatIsHeld(t *testing.T) {
	pass := []struct {
		name   string
		proto  string
		record []string
		ref    string
	}{
		{"answer and note moved (delete + create)", "openai", []string{recOpen, oaiAnswerItem, oaiNoteItem, oaiAnswerDel, oaiAnswerMove, oaiNoteDel, oaiNoteMove, recClose}, syntheticRef},
		{"an interim response while the id was live (LiveKit's acknowledgement)", "gemini", []string{recOpen, gemInterimLive, gemAnswer2, gemNote, recClose}, syntheticRef},
		{"a turn with two notes holds both", "gemini", []string{recOpen, gemAnswer2, gemTwoNotes, recClose},
			strings.Replace(syntheticRef, `{"out":"summary"`, `{"out":"note","t_ms":706,"job_id":"job-2","text":"System note: the user's name is Dana.","deliver":"now"}`+"\n"+`{"out":"summary"`, 1)},
	}
	for _, tc := range pass {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkRecordRef(t, tc.proto, tc.ref, tc.record)
			if !rep.OK() {
				t.Fatalf("mismatches: %q", rep.Mismatches)
			}
		})
	}
	fail := []struct {
		name   string
		record []string
		want   string
	}{
		{"an answer deleted and never sent again", []string{recOpen, oaiAnswerItem, oaiNoteItem, oaiAnswerDel, recClose},
			"fc_2 answered at 703 ms, and the model ends up holding no answer for it (deleted, never sent again)"},
		{"an answer without an id, deleted by the name the server gave it", []string{recOpen, oaiAnswerNoID, oaiEcho, oaiNoteItem, oaiEchoDel, recClose},
			"fc_2 answered at 703 ms, and the model ends up holding no answer for it"},
		{"a second answer before the first was deleted", []string{recOpen, oaiAnswerItem, oaiAnswer2, oaiNoteItem, recClose},
			"fc_2 answered 2 times (at 703, 703 ms), the model holding them at once on connection 1"},
		{"a note deleted and never sent again", []string{recOpen, oaiAnswerItem, oaiNoteItem, oaiNoteDel, recClose},
			"and the model ends up holding it 0 times"},
	}
	for _, tc := range fail {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkRecordRef(t, "openai", syntheticRef, tc.record)
			if rep.OK() {
				t.Fatalf("passed; want a mismatch %q", tc.want)
			}
			if all := strings.Join(rep.Mismatches, "\n"); !strings.Contains(all, tc.want) {
				t.Fatalf("mismatches:\n%s\nwant one containing %q", all, tc.want)
			}
		})
	}
}

// checkRecordRef is checkRecord with another reference.
func checkRecordRef(t *testing.T, proto, refText string, record []string) *fakeprovider.Report {
	t.Helper()
	tr := parseTrace(t, "synthetic", synthetic)
	ref, err := fakeprovider.ReadReference(strings.NewReader(refText), "ref")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := fakeprovider.ReadRecord(strings.NewReader(strings.ReplaceAll(strings.Join(record, "\n"), "PROTO", proto)), "record")
	if err != nil {
		t.Fatal(err)
	}
	return fakeprovider.Check(fakeprovider.CheckInput{Stack: "test", References: []fakeprovider.Reference{{Trace: tr, Lines: ref}}, Record: lines})
}

// TestCheckSkipsAndFailedReferences: a session the fake refused is listed with its
// reason and not judged; a session whose reference replay fails is a mismatch naming
// the error, and the other sessions are still judged.
func TestCheckSkipsAndFailedReferences(t *testing.T) {
	tr := parseTrace(t, "synthetic", synthetic)
	other := parseTrace(t, "other", synthetic)
	record := strings.Join([]string{
		strings.ReplaceAll(recOpen, "PROTO", "gemini"),
		`{"t_ms":0,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"refused","text":"line 6: unreadable arguments"}`,
		`{"t_ms":0,"session":1,"conn":1,"trace":"synthetic","proto":"gemini","kind":"close","code":1008,"by":"server"}`,
		strings.NewReplacer(`"session":1`, `"session":2`, `"trace":"synthetic"`, `"trace":"other"`, "PROTO", "gemini").Replace(recOpen),
		strings.NewReplacer(`"session":1`, `"session":2`, `"trace":"synthetic"`, `"trace":"other"`, "PROTO", "gemini").Replace(recClose),
	}, "\n")
	lines, err := fakeprovider.ReadRecord(strings.NewReader(record), "record")
	if err != nil {
		t.Fatal(err)
	}
	replays := 0
	rep := fakeprovider.Check(fakeprovider.CheckInput{Stack: "t", References: []fakeprovider.Reference{{Trace: tr}, {Trace: other}}, Record: lines,
		Replay: func(tr fakeprovider.Trace, _ []replay.TraceEvent) ([]replay.Line, error) {
			replays++
			return nil, errors.New("Complete(result): rpc error: code = InvalidArgument desc = result: 70000 bytes, at most 65536")
		}})
	if rep.Skipped != 1 || len(rep.Skips) != 1 || !strings.Contains(rep.Skips[0], "session 1 (synthetic, gemini): refused by the fake provider: line 6: unreadable arguments") {
		t.Errorf("skips %d %q, want the refused session with its reason", rep.Skipped, rep.Skips)
	}
	if replays != 1 || rep.Sessions != 1 || len(rep.Mismatches) != 1 || !strings.Contains(rep.Mismatches[0], "session 2 (other, gemini): no reference: the replay of its trace as the wire carried it failed: Complete(result)") {
		t.Errorf("replays %d, sessions %d, mismatches %q", replays, rep.Sessions, rep.Mismatches)
	}
	if !strings.HasSuffix(rep.Summary(), ", skipped 1") {
		t.Errorf("summary %q", rep.Summary())
	}
}
