package guard

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestDialClassTimeout: a dial whose deadline runs out inside the handshake fails with
// the network's "i/o timeout", not the context's error; it is a timeout (it was
// counted as network).
func TestDialClassTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers the upgrade
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, rerr := c.Read(make([]byte, 1))
	for _, e := range []error{rerr, fmt.Errorf("websocket: %w", rerr), context.DeadlineExceeded} {
		if got := dialClass(nil, e); got != DialTimeout {
			t.Errorf("dialClass(%v) = %s, want %s", e, got, DialTimeout)
		}
	}
}
