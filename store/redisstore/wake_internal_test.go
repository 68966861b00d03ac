package redisstore

import (
	"testing"

	"github.com/voicearbiter/arbiter/arbiter"
)

// TestWakeMessage: the wake-up message forms, those of earlier versions too.
func TestWakeMessage(t *testing.T) {
	for _, tc := range []struct {
		in      string
		version uint64
		life    string
		rec     string
		ok      bool
	}{
		{"7", 7, "", "", true}, // an earlier version's bare version
		{"7:123:", 7, "123", "", true},
		{"7:123:rec:with:colons", 7, "123", "rec:with:colons", true},
		{"7:123", 0, "", "", false},
		{"7::rec", 0, "", "", false},
		{"7:abc:rec", 0, "", "", false}, // a lifetime is decimal, as in a stored record
		{"x:123:rec", 0, "", "", false},
		{"", 0, "", "", false},
	} {
		v, life, rec, ok := wakeMessage(tc.in)
		if v != tc.version || life != tc.life || string(rec) != tc.rec || ok != tc.ok || (tc.rec == "") != (rec == nil) {
			t.Errorf("wakeMessage(%q) = %d, %q, %q, %v; want %d, %q, %q, %v", tc.in, v, life, rec, ok, tc.version, tc.life, tc.rec, tc.ok)
		}
	}
}

// TestCacheOrder: whatever order Redis's replies (put) and wake-up messages (offer)
// arrive in, the cache never hands out a copy older than one it was told of.
func TestCacheOrder(t *testing.T) {
	key := arbiter.SessionKey{ID: "s"}
	want := func(c *cache, what string, version uint64, ok bool) {
		t.Helper()
		v, data, sum, hit := c.get(key)
		if hit != ok || (ok && (v != version || string(data) != "r"+string(rune('0'+version)))) {
			t.Fatalf("%s: get = %d %q %v, want %d %v", what, v, data, hit, version, ok)
		}
		if hit && sum != digest(data) {
			t.Fatalf("%s: get's digest %s is not the record's, %s", what, sum, digest(data))
		}
	}
	rec := func(v uint64) []byte { return []byte("r" + string(rune('0'+v))) }

	c := newCache(10)
	c.offer(key, 5, "L", rec(5))
	c.put(key, 4, "L", rec(4)) // a Load whose reply came after version 5's message
	want(c, "put 4 after message 5", 5, true)
	c.offer(key, 3, "L", rec(3)) // a late message
	want(c, "message 3 after 5", 5, true)
	c.put(key, 6, "L", rec(6)) // a later save of this replica
	want(c, "put 6", 6, true)
	c.offer(key, 7, "L", nil) // a record too big to send
	want(c, "message 7 without its record", 0, false)
	c.put(key, 7, "L", rec(7))
	want(c, "put 7", 7, true)
	c.drop(key)                // a failed save
	c.put(key, 6, "L", rec(6)) // a read whose reply came after the drop
	want(c, "put 6 after a drop, message 7 heard", 0, false)
	c.put(key, 8, "L", rec(8))
	want(c, "put 8", 8, true)
	c.offer(key, 9, "M", rec(9)) // another lifetime: which is newer is unknown
	want(c, "message of another lifetime", 0, false)
	c.put(key, 1, "M", rec(1)) // what Redis says is taken as it is
	want(c, "put of the new lifetime", 1, true)
	c.offer(key, 2, "", nil) // an earlier version's bare message: 1 is stale
	want(c, "bare message 2", 0, false)

	// Without messages, put is what Redis said last, a lower version too (the session
	// expired and started again).
	c = newCache(10)
	c.put(key, 5, "L", rec(5))
	c.put(key, 1, "L", rec(1))
	want(c, "put 1 after put 5, no message", 1, true)
	if cs := c.stats(); cs.Woken != 0 {
		t.Errorf("stats %+v: no message, want none woken", cs)
	}
}
