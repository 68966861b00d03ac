package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// TestRecordTimeNeverGoesBack: a connection's lines are written in time order even
// when a line comes with an earlier time than the last one written (a due event
// played late carries its trace time): it takes the last time. Other connections keep
// their own times. (TestOpenAICallWaitsForDeclaredTools saw "record time goes back:
// 20 after 21" under load.)
func TestRecordTimeNeverGoesBack(t *testing.T) {
	var buf bytes.Buffer
	r := newRecorder(&buf, false)
	for _, l := range []RecordLine{
		{TMs: 21, Session: 1, Conn: 1, Kind: KindWarning},
		{TMs: 20, Session: 1, Conn: 1, Kind: KindServer},
		{TMs: 5, Session: 1, Conn: 2, Kind: KindOpen},
		{TMs: 30, Session: 1, Conn: 1, Kind: KindClient},
	} {
		r.write(l)
	}
	var got []int64
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l RecordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		got = append(got, l.TMs)
	}
	if want := []int64{21, 21, 5, 30}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("t_ms written %v, want %v", got, want)
	}
}
