package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
)

// safety bounds the raw-connection tests: what they wait for comes much sooner, and
// a test that needs it has failed.
const safety = 10 * time.Second

// TestHandshakeTimeout: a TCP connection that never sends the HTTP/2 preface is
// closed by the server (after the handshake timeout, 200 ms here), not held open.
func TestHandshakeTimeout(t *testing.T) {
	addr := serve(t, server.Options{Conn: server.ConnLimits{Handshake: 200 * time.Millisecond}}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(safety))
	// The server speaks first (its SETTINGS), then waits for the preface we never send.
	_, err = io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v without a preface", safety)
	}
}

// rawConn is an HTTP/2 connection that speaks frames directly, ignoring what the
// server's SETTINGS ask (as an abusive client would).
type rawConn struct {
	t    *testing.T
	conn net.Conn
	fr   *http2.Framer
	addr string
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(safety))
	r := &rawConn{t: t, conn: c, fr: http2.NewFramer(c, c), addr: addr}
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := r.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return r
}

// until reads frames until match returns true for one, acknowledging the server's
// SETTINGS; it fails the test if the connection ends first.
func (r *rawConn) until(what string, match func(http2.Frame) bool) http2.Frame {
	r.t.Helper()
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			r.t.Fatalf("waiting for %s: %v", what, err)
		}
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			if err := r.fr.WriteSettingsAck(); err != nil {
				r.t.Fatal(err)
			}
		}
		if match(f) {
			return f
		}
	}
}

// open sends the HEADERS of a Watch request on stream id and no body, so the stream
// stays open.
func (r *rawConn) open(id uint32) {
	r.t.Helper()
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, h := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/arbiter.v1.ArbiterService/Watch"},
		{":authority", r.addr}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: b.Bytes(), EndHeaders: true}); err != nil {
		r.t.Fatal(err)
	}
}

// TestMaxStreams with a limit of 2 streams per connection: a grpc-go client queues a
// third RPC until one of its two open Watch streams ends (so it waits out a short
// deadline, and goes through once one is closed); a client that ignores the limit has
// its third stream refused (RST_STREAM REFUSED_STREAM) and keeps the other two.
func TestMaxStreams(t *testing.T) {
	addr := serve(t, server.Options{Conn: server.ConnLimits{MaxStreams: 2}}, nil)

	t.Run("grpc-go client queues", func(t *testing.T) {
		c := arbiterv1.NewArbiterServiceClient(dial(t, addr, nil))
		ctx := context.Background()
		var cancels []context.CancelFunc
		for _, sid := range []string{"s1", "s2"} {
			// The reply also means the server's SETTINGS (the limit) reached the client.
			if _, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: sid, Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START}); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithCancel(ctx)
			t.Cleanup(cancel)
			if _, err := c.Watch(wctx, &arbiterv1.WatchRequest{SessionId: sid}); err != nil {
				t.Fatal(err)
			}
			cancels = append(cancels, cancel)
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if _, err := c.GetSession(short, &arbiterv1.GetSessionRequest{SessionId: "s1"}); status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("a third RPC with two streams open: %v, want DEADLINE_EXCEEDED (queued)", err)
		}
		cancels[0]()
		long, cancel := context.WithTimeout(ctx, safety)
		defer cancel()
		if _, err := c.GetSession(long, &arbiterv1.GetSessionRequest{SessionId: "s1"}); err != nil {
			t.Fatalf("once a stream ended: %v", err)
		}
	})

	t.Run("raw client refused", func(t *testing.T) {
		r := dialRaw(t, addr)
		r.until("the server's SETTINGS", func(f http2.Frame) bool {
			s, ok := f.(*http2.SettingsFrame)
			return ok && !s.IsAck()
		})
		for _, id := range []uint32{1, 3, 5} {
			r.open(id)
		}
		f := r.until("a RST_STREAM", func(f http2.Frame) bool { _, ok := f.(*http2.RSTStreamFrame); return ok }).(*http2.RSTStreamFrame)
		if f.StreamID != 5 || f.ErrCode != http2.ErrCodeRefusedStream {
			t.Fatalf("RST_STREAM on stream %d with %v, want stream 5 REFUSED_STREAM", f.StreamID, f.ErrCode)
		}
	})
}

// TestKeepalivePings with a keepalive minimum of 300 ms: pings at least that far
// apart are answered, with no RPC in flight (an idle channel kept warm); pings sent
// back to back get GOAWAY ENHANCE_YOUR_CALM "too_many_pings".
func TestKeepalivePings(t *testing.T) {
	r := dialRaw(t, serve(t, server.Options{Conn: server.ConnLimits{KeepaliveMinTime: 300 * time.Millisecond}}, nil))
	isAck := func(f http2.Frame) bool {
		if g, ok := f.(*http2.GoAwayFrame); ok {
			t.Fatalf("GOAWAY %v %q for pings %v apart", g.ErrCode, g.DebugData(), 400*time.Millisecond)
		}
		p, ok := f.(*http2.PingFrame)
		return ok && p.IsAck()
	}
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(400 * time.Millisecond)
		}
		if err := r.fr.WritePing(false, [8]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		r.until("a ping ACK", isAck)
	}
	for i := 0; i < 5; i++ {
		if err := r.fr.WritePing(false, [8]byte{byte(10 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	f := r.until("a GOAWAY", func(f http2.Frame) bool { _, ok := f.(*http2.GoAwayFrame); return ok }).(*http2.GoAwayFrame)
	if f.ErrCode != http2.ErrCodeEnhanceYourCalm || string(f.DebugData()) != "too_many_pings" {
		t.Fatalf("GOAWAY %v %q, want ENHANCE_YOUR_CALM too_many_pings", f.ErrCode, f.DebugData())
	}
}

// TestMaxHeaderSize: metadata past the 8 KiB header limit is RESOURCE_EXHAUSTED
// naming the limit, for a unary RPC and a stream; 1 KiB goes through.
func TestMaxHeaderSize(t *testing.T) {
	c := arbiterv1.NewArbiterServiceClient(dial(t, serve(t, server.Options{}, nil), nil))
	with := func(n int) error {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-padding", strings.Repeat("a", n))
		_, err := c.ReportSpeech(ctx, &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START})
		return err
	}
	if err := with(1 << 10); err != nil {
		t.Fatalf("1 KiB of metadata: %v", err)
	}
	// Over the limit: RESOURCE_EXHAUSTED naming the limit, which a client can act on
	// (grpc-go used to fail it with INTERNAL before sending).
	if err := with(16 << 10); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "8192 bytes") {
		t.Fatalf("16 KiB of metadata: %v, want RESOURCE_EXHAUSTED naming the 8192-byte limit", err)
	}
	// A Watch stream too.
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-padding", strings.Repeat("a", 16<<10))
	st, err := c.Watch(ctx, &arbiterv1.WatchRequest{SessionId: "s"})
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("Watch with 16 KiB of metadata: %v, want RESOURCE_EXHAUSTED", err)
	}
	// Far past it the HTTP/2 layer refuses it, without reading it all.
	if err := with(1 << 20); status.Code(err) == codes.OK {
		t.Fatal("1 MiB of metadata accepted")
	}
}
