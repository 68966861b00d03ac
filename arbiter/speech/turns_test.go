package speech

import "testing"

func TestKeepTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"one two three four", 10, "four"},       // cut inside "three": the next word starts the tail
		{"one two three four", 11, "three four"}, // the cut falls on a space
		{"abcdefghijklmnop", 5, "lmnop"},         // one long word: cut, not dropped
		{"déjà vu déjà vu", 7, "vu"},             // never inside a word
		{"ééééé", 5, "éé"},                       // a UTF-8 boundary inside one long word
		{"no, stop.", 9, "no, stop."},            // exactly max
	} {
		if got := KeepTail(tc.in, tc.max); got != tc.want {
			t.Errorf("KeepTail(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if got := KeepTail(tc.in, tc.max); len(got) > tc.max {
			t.Errorf("KeepTail(%q, %d) = %q: longer than max", tc.in, tc.max, got)
		}
	}
}
