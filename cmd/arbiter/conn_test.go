package main

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestServeHandshakeTimeout: --handshake-timeout reaches the server: a connection that
// never sends the HTTP/2 preface is closed (200 ms here; 10 s is only a safety net).
func TestServeHandshakeTimeout(t *testing.T) {
	p := startServe(t, "--handshake-timeout", "200ms")
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("connection without a preface still open after 10 s")
	}
}

// TestServeConnFlagsValidated: out-of-range connection limits are usage errors.
func TestServeConnFlagsValidated(t *testing.T) {
	for _, args := range [][]string{
		{"--handshake-timeout", "0s"}, {"--max-concurrent-streams", "0"}, {"--max-header-size", "100"},
		{"--keepalive-time", "100ms"}, {"--max-connection-age=-1s"}, {"--unauth-burst", "0"},
		// Not connection limits, but refused the same way: the record formats of older
		// versions are for the Redis store, one at a time.
		{"--redis-legacy-records"}, {"--redis-json-records", "--state-file", "x.db"},
		{"--redis-legacy-records", "--redis-json-records", "--redis-url", "redis://127.0.0.1:1"},
	} {
		var stdout, stderr syncBuffer
		if code := run(t.Context(), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr.String())
		}
	}
}
