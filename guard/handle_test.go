package guard

import (
	"strings"
	"testing"
)

// TestSplitHandleSessionIsAnID: a resumption handle names the guard's session only
// when that session is a session id the API accepts; any other (spaces, a snowman,
// 3,000 characters, empty) is not the guard's handle and names no session (before,
// such a handle created a session GetSession then refused as an invalid id).
func TestSplitHandleSessionIsAnID(t *testing.T) {
	if s, real, ok := splitHandle(joinHandle("wg-1.a:b_c", "srv~x")); !ok || s != "wg-1.a:b_c" || real != "srv~x" {
		t.Errorf("the guard's own handle: %q %q %v", s, real, ok)
	}
	for _, h := range []string{"arb~bad id with spaces ☃~h", "arb~" + strings.Repeat("a", 3000) + "~h", "arb~~h", "arb~nohandle", "other"} {
		if s, _, ok := splitHandle(h); ok {
			t.Errorf("%.40q: read as the guard's, session %.40q", h, s)
		}
	}
}
