package sessioncodec_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"pgregory.net/rapid"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/sessioncodec"
	"github.com/voicearbiter/arbiter/store/storetest"
)

var timeType = reflect.TypeFor[time.Time]()

// anySession draws a session with every exported field of every type in it filled by
// reflection (so a field added to arbiter.Session, or to anything it holds, is drawn
// too, and a codec that forgets it fails the round trip): strings, numbers, booleans,
// times (zero, or within ten years of 2026 in UTC, to the nanosecond), nil or set
// pointers, nil or one to three element slices, and JSON-shaped maps (what a map of
// the session holds: strings, finite float64 numbers, booleans, null, nested maps and
// lists; at the top never an empty one, which the JSON record, omitting it, reads back as nil).
// Version is 0 and Digest empty: they are the store's, not part of the record.
func anySession(t *rapid.T) *arbiter.Session {
	s := new(arbiter.Session)
	draw(t, reflect.ValueOf(s).Elem(), "session", 0)
	s.Version, s.Digest = 0, ""
	return s
}

func draw(t *rapid.T, v reflect.Value, label string, depth int) {
	typ := v.Type()
	if typ == timeType {
		if rapid.IntRange(0, 3).Draw(t, label+".zero?") == 0 {
			return
		}
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
		const span = int64(10 * 365 * 24 * time.Hour)
		v.Set(reflect.ValueOf(time.Unix(0, base+rapid.Int64Range(-span, span).Draw(t, label)).UTC()))
		return
	}
	switch typ.Kind() {
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() {
				draw(t, v.Field(i), label+"."+f.Name, depth+1)
			}
		}
	case reflect.Pointer:
		if depth > 8 || rapid.Bool().Draw(t, label+"?") {
			return
		}
		p := reflect.New(typ.Elem())
		draw(t, p.Elem(), label, depth+1)
		v.Set(p)
	case reflect.Slice:
		n := rapid.IntRange(0, 3).Draw(t, label+".len")
		if depth > 8 || n == 0 {
			return
		}
		sl := reflect.MakeSlice(typ, n, n)
		for i := range n {
			el := sl.Index(i)
			if el.Kind() == reflect.Pointer { // the session's slices hold no nils
				el.Set(reflect.New(typ.Elem().Elem()))
				el = el.Elem()
			}
			draw(t, el, label+"[]", depth+1)
		}
		v.Set(sl)
	case reflect.Map:
		if typ != reflect.TypeFor[map[string]any]() {
			t.Fatalf("%s: no generator for %s", label, typ)
		}
		if rapid.Bool().Draw(t, label+"?") {
			return
		}
		m := jsonMap(t, label, 0)
		if len(m) == 0 { // JSON's omitempty reads an empty map back as nil
			m["k"] = "v"
		}
		v.Set(reflect.ValueOf(m))
	case reflect.String:
		v.SetString(rapid.String().Draw(t, label))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, label))
	case reflect.Int, reflect.Int64:
		v.SetInt(rapid.Int64Range(-1<<40, 1<<40).Draw(t, label))
	case reflect.Uint64:
		v.SetUint(rapid.Uint64().Draw(t, label))
	case reflect.Float64: // finite: a session holds no NaN (JSON cannot carry it)
		v.SetFloat(rapid.Float64Range(-1e9, 1e9).Draw(t, label))
	default:
		t.Fatalf("%s: no generator for %s", label, typ)
	}
}

func jsonMap(t *rapid.T, label string, depth int) map[string]any {
	m := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, label+".keys") {
		m[rapid.String().Draw(t, label+".key")] = jsonValue(t, label, depth+1)
	}
	return m
}

func jsonValue(t *rapid.T, label string, depth int) any {
	kinds := 4
	if depth < 3 {
		kinds = 6
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, label+".kind") {
	case 0:
		return rapid.String().Draw(t, label+".s")
	case 1:
		f := rapid.Float64().Draw(t, label+".f")
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0
		}
		return f
	case 2:
		return rapid.Bool().Draw(t, label+".b")
	case 3:
		return nil
	case 4:
		return jsonMap(t, label, depth)
	}
	l := []any{}
	for range rapid.IntRange(0, 3).Draw(t, label+".n") {
		l = append(l, jsonValue(t, label, depth+1))
	}
	return l
}

// link makes s look like what the engine keeps, so that the encoder's references
// into the log are taken: the log's sequence numbers contiguous, and each call
// outcome and job completion made of log entries (a drawn one, with its Seq).
func link(t *rapid.T, s *arbiter.Session) {
	if len(s.Log) == 0 {
		return
	}
	first := rapid.Uint64Range(1, 1000).Draw(t, "log.first")
	for i := range s.Log {
		s.Log[i].Seq = first + uint64(i)
	}
	pick := func(label string) arbiter.LogEntry {
		return s.Log[rapid.IntRange(0, len(s.Log)-1).Draw(t, label)]
	}
	for _, c := range s.Calls {
		if x := pick("call.log"); c.Outcome != nil && x.Response != nil {
			c.Outcome.Seq, c.Outcome.Response = x.Seq, x.Response.Payload
		}
	}
	for _, j := range s.Jobs {
		c := &arbiter.Effects{}
		for range rapid.IntRange(1, 3).Draw(t, "job.effects") {
			x := pick("job.log")
			switch {
			case x.Response != nil:
				r := *x.Response
				r.Seq = x.Seq
				c.Responses = append(c.Responses, r)
			case x.Skip != nil:
				k := *x.Skip
				k.Seq = x.Seq
				c.Skips = append(c.Skips, k)
			case x.Note != nil:
				n := *x.Note
				n.Seq = x.Seq
				c.Notes = append(c.Notes, n)
			case x.Run != nil:
				u := *x.Run
				u.Seq = x.Seq
				c.Runs = append(c.Runs, u)
			}
		}
		j.Completion = c
	}
	for i := range s.Log { // the copies above now carry the entries' Seqs
		x := &s.Log[i]
		if x.Response != nil {
			x.Response.Seq = x.Seq
		}
		if x.Skip != nil {
			x.Skip.Seq = x.Seq
		}
		if x.Note != nil {
			x.Note.Seq = x.Seq
		}
		if x.Run != nil {
			x.Run.Seq = x.Seq
		}
	}
}

// TestRoundTrip: decode(encode(s)) is s, for any session, and for one whose outcomes
// and completions are log entries (stored as references to them); in FormatProtoS2,
// or FormatProto when that is no longer, and in FormatProto (EncodeProto, what
// versions before FormatProtoS2 read) too.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := anySession(t)
		if rapid.Bool().Draw(t, "link") {
			link(t, s)
		}
		rec, err := sessioncodec.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		old, err := sessioncodec.EncodeProto(s)
		if err != nil {
			t.Fatal(err)
		}
		if old[0] != sessioncodec.FormatProto {
			t.Fatalf("EncodeProto's record starts with 0x%02x, want FormatProto", old[0])
		}
		switch {
		case rec[0] == sessioncodec.FormatProtoS2 && len(rec) < len(old):
		case rec[0] == sessioncodec.FormatProto && string(rec) == string(old):
		default:
			t.Fatalf("record starts with 0x%02x, %d B (FormatProto: %d B); want FormatProtoS2 and shorter, or FormatProto", rec[0], len(rec), len(old))
		}
		for _, r := range [][]byte{rec, old} {
			got, err := sessioncodec.Decode(r)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, s) {
				t.Fatalf("decode(encode(s)) in format 0x%02x differs from s:\n got %s\nwant %s", r[0], jsonOf(t, got), jsonOf(t, s))
			}
		}
	})
}

// TestReadsJSON: a JSON record, what every store wrote before FormatProto (and old
// replicas still write during a rolling upgrade), decodes to the same session as the
// new record of it, and JSON gives it back as it was.
func TestReadsJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := anySession(t)
		old, err := arbiter.EncodeSession(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sessioncodec.Decode(old)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("the JSON record decodes to another session:\n got %s\nwant %s", jsonOf(t, got), jsonOf(t, s))
		}
		rec, err := sessioncodec.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		back, err := sessioncodec.JSON(rec)
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != string(old) {
			t.Fatalf("JSON(encode(s)) = %s, want %s", back, old)
		}
	})
}

// TestEngineSessions: the sessions the benchmarks use, made by the engine, round-trip
// and shrink: under half their JSON, and FormatProtoS2 under 75 % of FormatProto.
func TestEngineSessions(t *testing.T) {
	e := storetest.BenchEngine(t, "../..")
	for _, s := range []*arbiter.Session{storetest.IdleSession(t, e, "idle"), storetest.BusySession(t, e, "busy", 20)} {
		rec, err := sessioncodec.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sessioncodec.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("%s: decode(encode(s)) differs:\n got %s\nwant %s", s.Key.ID, jsonOf(t, got), jsonOf(t, s))
		}
		old, _ := arbiter.EncodeSession(s)
		if len(rec)*2 > len(old) {
			t.Errorf("%s: record %d B, JSON %d B: want under half", s.Key.ID, len(rec), len(old))
		}
		plain, _ := sessioncodec.EncodeProto(s)
		if rec[0] != sessioncodec.FormatProtoS2 || len(rec)*4 > len(plain)*3 {
			t.Errorf("%s: record 0x%02x, %d B, FormatProto %d B: want FormatProtoS2, under 75 %%", s.Key.ID, rec[0], len(rec), len(plain))
		}
		t.Logf("%s: %d B (FormatProto %d B, JSON %d B)", s.Key.ID, len(rec), len(plain), len(old))
	}
}

// TestRefuses: an empty record, an unknown format, a malformed message, malformed S2
// and an S2 block claiming a length over the bound are Internal errors.
func TestRefuses(t *testing.T) {
	for _, rec := range [][]byte{nil, {0x03, 1, 2}, {0x00}, {sessioncodec.FormatProto, 0xff, 0xff}, []byte("{not json"), []byte("null?"),
		{sessioncodec.FormatProtoS2, 1, 2}, {sessioncodec.FormatProtoS2}, {sessioncodec.FormatProtoS2, 0xff, 0xff, 0xff, 0xff, 0x0f, 0},
		append([]byte{sessioncodec.FormatProtoS2}, s2.Encode(nil, []byte{0xff, 0xff})...)} {
		if _, err := sessioncodec.Decode(rec); arbiter.KindOf(err) != arbiter.Internal {
			t.Errorf("Decode(%q) = %v, want Internal", rec, err)
		}
	}
}

func jsonOf(t interface{ Fatal(...any) }, s *arbiter.Session) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInvalidUTF8: a session holding a string that is not valid UTF-8, which protobuf
// refuses, is written as JSON (as before the protobuf record), and reads back as JSON
// read it: each invalid byte replaced with U+FFFD.
func TestInvalidUTF8(t *testing.T) {
	e := storetest.BenchEngine(t, "../..")
	s := storetest.IdleSession(t, e, "utf8")
	s.Jobs[0].Reason = "cut in the middle of a rune: \xe2\x82"
	rec, err := sessioncodec.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if rec[0] != sessioncodec.FormatJSON {
		t.Fatalf("record starts with 0x%02x, want JSON", rec[0])
	}
	got, err := sessioncodec.Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cut in the middle of a rune: \ufffd\ufffd"; got.Jobs[0].Reason != want {
		t.Fatalf("reason %q, want %q", got.Jobs[0].Reason, want)
	}
}

// TestGoldenRecords: the records in testdata/formatN decode to the session beside
// them (NAME.json, arbiter.EncodeSession's), and JSON gives that back byte for byte:
// what a rolling upgrade reads from the replicas before it, and what later versions
// must keep reading. format1 holds FormatProto records written by commit 287788f's
// Encode (main before FormatProtoS2); format2 FormatProtoS2 ones of the same
// sessions, written by the commit that added it (S2 of EncodeProto's message, also
// where S2 does not shrink it, as for the drawn sessions' random strings, for which
// Encode writes FormatProto). The sessions are the benchmarks' (idle, calls20) and
// four drawn by anySession (rapid's examples 1 to 4, linked or not as TestRoundTrip
// draws it), which fill every field.
func TestGoldenRecords(t *testing.T) {
	for _, c := range []struct {
		dir    string
		format byte
	}{{"testdata/format1", sessioncodec.FormatProto}, {"testdata/format2", sessioncodec.FormatProtoS2}} {
		recs, err := filepath.Glob(filepath.Join(c.dir, "*.rec"))
		if err != nil || len(recs) != 6 {
			t.Fatalf("%s: %d records, %v; want 6", c.dir, len(recs), err)
		}
		for _, path := range recs {
			rec, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			js, err := os.ReadFile(strings.TrimSuffix(path, ".rec") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			js = bytes.TrimSuffix(js, []byte("\n"))
			want, err := arbiter.DecodeSession(js)
			if err != nil {
				t.Fatal(err)
			}
			if rec[0] != c.format {
				t.Fatalf("%s: format 0x%02x, want 0x%02x", path, rec[0], c.format)
			}
			got, err := sessioncodec.Decode(rec)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s decodes to another session:\n got %s\nwant %s", path, jsonOf(t, got), js)
			}
			back, err := sessioncodec.JSON(rec)
			if err != nil || !bytes.Equal(back, js) {
				t.Fatalf("%s: JSON gives %s (%v), want %s", path, back, err, js)
			}
			// The writers give the same bytes: EncodeProto (redisstore's LegacyRecords)
			// exactly what 287788f wrote, Encode its FormatProtoS2 record where it
			// takes S2.
			enc := sessioncodec.EncodeProto
			if c.format == sessioncodec.FormatProtoS2 {
				enc = sessioncodec.Encode
			}
			if again, err := enc(want); err != nil || (again[0] == c.format && !bytes.Equal(again, rec)) {
				t.Fatalf("%s: encoding its session again gives another record (%v)", path, err)
			}
		}
	}
}

// TestRecordsAreOwned: a record is the caller's, at its length: encoding other
// sessions after it (which reuses Encode's scratch buffers) leaves it as it was, in
// either format Encode writes; and a decoded session shares nothing with Decode's
// scratch buffer: decoding others after it leaves it as it was.
func TestRecordsAreOwned(t *testing.T) {
	e := storetest.BenchEngine(t, "../..")
	idle, busy := storetest.IdleSession(t, e, "owned"), storetest.BusySession(t, e, "owned-busy", 5)
	drawn := rapid.Custom(anySession).Example(1) // random strings: S2 does not shrink it
	sessions := []*arbiter.Session{idle, drawn, busy, idle, drawn}
	var recs, copies [][]byte
	for _, s := range sessions {
		rec, err := sessioncodec.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		if cap(rec) != len(rec) {
			t.Errorf("record of %d B has room for %d", len(rec), cap(rec))
		}
		recs, copies = append(recs, rec), append(copies, bytes.Clone(rec))
	}
	formats := map[byte]bool{}
	for i := range recs {
		if !bytes.Equal(recs[i], copies[i]) {
			t.Fatalf("record %d changed after later encodings", i)
		}
		formats[recs[i][0]] = true
	}
	if !formats[sessioncodec.FormatProto] || !formats[sessioncodec.FormatProtoS2] {
		t.Fatalf("formats written %v, want both FormatProto and FormatProtoS2", formats)
	}
	var decoded []*arbiter.Session
	for _, rec := range []([]byte){recs[2], recs[0], recs[1], recs[2]} {
		got, err := sessioncodec.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, got)
	}
	for i, want := range []*arbiter.Session{busy, idle, drawn, busy} {
		if !reflect.DeepEqual(decoded[i], want) {
			t.Fatalf("decoded session %d changed after later decodings", i)
		}
	}
}
