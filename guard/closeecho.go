package guard

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
)

// A close the agent sends without a status code (its own close, to reconnect) is
// answered by coder/websocket with an empty close frame, which the agent's WebSocket
// library then reports as 1005 (no status). LiveKit agents-js's Google plugin closes
// its own socket that way to restart its session when its tools or instructions change
// and takes the 1005 for a fatal error (the AgentSession ends). The guard answers such
// a close with 1000 (normal closure): RFC 6455 5.5.1 has an endpoint echo the code it
// received "typically", and a client that closed its own connection asked for a normal
// one. closeEchoWriter turns the guard's empty close frame to the agent into a 1000
// one; nothing else it writes is touched.

// emptyClose is an unmasked close frame without a payload (server to client), and
// normalClose the same with status 1000.
var (
	emptyClose  = []byte{0x88, 0x00}
	normalClose = []byte{0x88, 0x02, 0x03, 0xe8}
)

// closeEchoConn rewrites a write that is exactly an empty close frame.
type closeEchoConn struct{ net.Conn }

func (c closeEchoConn) Write(p []byte) (int, error) {
	if bytes.Equal(p, emptyClose) {
		if _, err := c.Conn.Write(normalClose); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// closeEchoWriter is an http.ResponseWriter whose hijacked connection is a
// closeEchoConn (coder/websocket writes each control frame in one flush).
type closeEchoWriter struct {
	http.ResponseWriter
}

func (w closeEchoWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("http.ResponseWriter does not implement http.Hijacker")
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	if brw.Writer.Buffered() > 0 {
		if err := brw.Writer.Flush(); err != nil {
			return nil, nil, err
		}
	}
	cc := closeEchoConn{c}
	return cc, bufio.NewReadWriter(brw.Reader, bufio.NewWriter(cc)), nil
}
