package guard_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/guard"
	"github.com/voicearbiter/arbiter/store/memory"
)

const geminiPath = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

// audioFrame is frame i of one side, shaped as that side sends audio (the guard's fast
// path: forwarded from a pooled buffer), its audio a pattern only i makes.
func audioFrame(up bool, i int) []byte {
	pcm := []byte(strings.Repeat(fmt.Sprintf("%06d|", i), 300)) // 2.1 KB of audio
	data := base64.StdEncoding.EncodeToString(pcm)
	if up {
		return []byte(`{"realtimeInput":{"audio":{"data":"` + data + `","mimeType":"audio/pcm;rate=16000"}}}`)
	}
	return []byte(`{"serverContent":{"modelTurn":{"parts":[{"inlineData":{"mimeType":"audio/pcm;rate=24000","data":"` + data + `"}}]}}}`)
}

// guardInFrontOf serves the guard (embedded store) in front of the upstream handler
// and returns the agent's URL.
func guardInFrontOf(t *testing.T, upstream http.Handler) string {
	t.Helper()
	u, _ := guardProxyInFrontOf(t, upstream)
	return u
}

// guardProxyInFrontOf is guardInFrontOf with the guard.
func guardProxyInFrontOf(t *testing.T, upstream http.Handler) (string, *guard.Proxy) {
	t.Helper()
	return guardWith(t, upstream, nil)
}

// guardWith is guardProxyInFrontOf with the guard's options changed by opt (when set).
func guardWith(t *testing.T, upstream http.Handler, opt func(*guard.Options)) (string, *guard.Proxy) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	u, _ := url.Parse(strings.Replace(up.URL, "http://", "ws://", 1))
	st := memory.New(nil)
	t.Cleanup(func() { st.Close() })
	p := &arbiter.Policy{}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: p}, Store: st, Clock: arbiter.SystemClock{}, Calls: st}
	o := guard.Options{Service: svc, Gemini: u, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if opt != nil {
		opt(&o)
	}
	g, err := guard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(g)
	t.Cleanup(func() { g.Close(); gs.Close() })
	return strings.Replace(gs.URL, "http://", "ws://", 1) + geminiPath, g
}

// acceptSetup is the provider's side of a connection's start: it accepts the guard's
// connection (messages up to 16 MiB), reads the agent's setup and answers
// setupComplete. The caller closes the connection.
func acceptSetup(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(16 << 20)
	if _, _, err := c.Read(r.Context()); err != nil {
		c.CloseNow()
		return nil, err
	}
	_ = c.Write(r.Context(), websocket.MessageBinary, []byte(`{"setupComplete":{}}`))
	return c, nil
}

// dialAgent connects an agent to the guard at url, sends its setup and reads the
// setupComplete.
func dialAgent(ctx context.Context, t *testing.T, url string) *websocket.Conn {
	t.Helper()
	a, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.SetReadLimit(16 << 20)
	if err := a.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/m"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, b, err := a.Read(ctx); err != nil || !strings.Contains(string(b), "setupComplete") {
		t.Fatalf("setupComplete: %s %v", b, err)
	}
	return a
}

// readFrames reads n messages from c and reports the first that is not frame i of
// the other side, in order.
func readFrames(ctx context.Context, c *websocket.Conn, up bool, n int) error {
	for i := 0; i < n; i++ {
		_, b, err := c.Read(ctx)
		if err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		if want := audioFrame(up, i); string(b) != string(want) {
			return fmt.Errorf("frame %d arrived as %.80q…, want %.80q…", i, b, want)
		}
	}
	return nil
}

// TestProxyForwardsAudioIntactBothWays: audio streamed both ways at once, as fast as
// the sockets take it, arrives whole and in order on each side. The guard reads each
// frame into a pooled buffer and hands the buffer back once the frame is written;
// a buffer handed back early, or taken by two frames, shows here as a frame that
// arrives with another's bytes.
func TestProxyForwardsAudioIntactBothWays(t *testing.T) {
	const n = 3000
	upErr := make(chan error, 1)
	agentURL := guardInFrontOf(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := acceptSetup(w, r)
		if err != nil {
			upErr <- err
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		go func() {
			for i := 0; i < n; i++ {
				if c.Write(ctx, websocket.MessageBinary, audioFrame(false, i)) != nil {
					return
				}
			}
		}()
		upErr <- readFrames(ctx, c, true, n)
		_, _, _ = c.Read(ctx) // until the agent closes
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := dialAgent(ctx, t, agentURL)
	defer a.CloseNow()
	go func() {
		for i := 0; i < n; i++ {
			if a.Write(ctx, websocket.MessageText, audioFrame(true, i)) != nil {
				return
			}
		}
	}()
	if err := readFrames(ctx, a, false, n); err != nil {
		t.Errorf("down (to the agent): %v", err)
	}
	if err := <-upErr; err != nil {
		t.Errorf("up (to the provider): %v", err)
	}
	_ = a.Close(websocket.StatusNormalClosure, "")
}

// TestProxyCloseCodePassesWhileStreaming: a side that closes with a code while the
// other still streams audio at it: the other gets that code and reason. The guard
// sends its close frame and waits for the peer's before it closes the socket (the
// close handshake); a socket closed at once with the streaming peer's frames unread
// is reset, and the peer can lose the close frame to the reset.
func TestProxyCloseCodePassesWhileStreaming(t *testing.T) {
	// Each way eight times: a reset loses the close frame in some runs, not all; and a
	// frame for the agent written after its close was answered made the provider get
	// 1011 "a write failed" in about one run of ten.
	closers := slices.Repeat([]string{"provider", "agent"}, 8)
	for _, closer := range closers {
		t.Run(closer+" closes", func(t *testing.T) {
			got := make(chan error, 1)
			agentURL := guardInFrontOf(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := acceptSetup(w, r)
				if err != nil {
					return
				}
				defer c.CloseNow()
				ctx := r.Context()
				if closer == "provider" {
					go func() { _, _, _ = c.Read(ctx) }() // its close handshake's reply
					time.Sleep(200 * time.Millisecond)    // the agent streams meanwhile
					_ = c.Close(4001, "bye from the provider")
					return
				}
				go func() { _, _, err := c.Read(ctx); got <- err }()
				for i := 0; ; i++ {
					if err := c.Write(ctx, websocket.MessageBinary, audioFrame(false, i)); err != nil {
						break
					}
				}
			}))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a := dialAgent(ctx, t, agentURL)
			defer a.CloseNow()
			var err error
			want := websocket.StatusCode(4001)
			if closer == "provider" {
				go func() {
					for i := 0; ; i++ {
						if a.Write(ctx, websocket.MessageText, audioFrame(true, i)) != nil {
							return
						}
					}
				}()
				for {
					if _, _, err = a.Read(ctx); err != nil {
						break
					}
				}
			} else {
				want = 4002
				time.Sleep(200 * time.Millisecond) // the provider streams meanwhile
				go func() {
					for {
						if _, _, err := a.Read(ctx); err != nil {
							return
						}
					}
				}()
				_ = a.Close(4002, "bye from the agent")
				err = <-got
			}
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != want || !strings.HasPrefix(ce.Reason, "bye from the "+closer) {
				t.Errorf("the %s's close reached the other side as %v, want %d", closer, err, want)
			}
		})
	}
}

// TestProxyForwardsLargeMessagesWhole: messages past the pooled buffer (8 KiB) and
// past the upstream frame (64 KiB: sent upstream in fragments) arrive whole, each
// way: a setup with a long system instruction up, a long turn of model audio down.
func TestProxyForwardsLargeMessagesWhole(t *testing.T) {
	big := func(up bool, n int) []byte {
		pad := strings.Repeat("x", n)
		if up {
			return []byte(`{"clientContent":{"turns":[{"role":"user","parts":[{"text":"` + pad + `"}]}],"turnComplete":true}}`)
		}
		return []byte(`{"serverContent":{"modelTurn":{"parts":[{"text":"` + pad + `"}]}}}`)
	}
	// 9 MiB: over the 8 MiB a peer that does not read may leave queued, under the
	// 32 MiB read limit: one message that large is no sign of a peer that does not
	// read (it ended the connection with 1008 "the agent does not read").
	sizes := []int{9 << 10, 70 << 10, 300 << 10, 9 << 20}
	upErr := make(chan error, 1)
	agentURL := guardInFrontOf(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := acceptSetup(w, r)
		if err != nil {
			upErr <- err
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for _, n := range sizes {
			_ = c.Write(ctx, websocket.MessageBinary, big(false, n))
		}
		for _, n := range sizes {
			_, b, err := c.Read(ctx)
			if err != nil || string(b) != string(big(true, n)) {
				upErr <- fmt.Errorf("%d bytes up arrived as %d bytes (%v)", len(big(true, n)), len(b), err)
				return
			}
		}
		upErr <- nil
		_, _, _ = c.Read(ctx)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := dialAgent(ctx, t, agentURL)
	defer a.CloseNow()
	for _, n := range sizes {
		if err := a.Write(ctx, websocket.MessageText, big(true, n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range sizes {
		_, b, err := a.Read(ctx)
		if err != nil || string(b) != string(big(false, n)) {
			t.Errorf("%d bytes down arrived as %d bytes (%v)", len(big(false, n)), len(b), err)
		}
	}
	if err := <-upErr; err != nil {
		t.Error(err)
	}
}

// TestProxyCloseReasonCutAtACharacter: a close reason longer than a close frame holds
// for the guard (123 bytes) is cut at a character's start. Cut inside a UTF-8
// sequence (it was cut at byte 120 whatever was there) the close frame is invalid and
// the agent got a protocol error instead of the provider's code.
func TestProxyCloseReasonCutAtACharacter(t *testing.T) {
	reason := strings.Repeat("x", 119) + "€" // 122 bytes: the cut at 120 fell inside €
	agentURL := guardInFrontOf(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := acceptSetup(w, r)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_ = c.Close(4000, reason)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := dialAgent(ctx, t, agentURL)
	defer a.CloseNow()
	_, _, err := a.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4000 || ce.Reason != reason {
		t.Errorf("the provider's close (4000, a 122-byte reason) reached the agent as %v", err)
	}
}

// TestProxyKeepsAnAgentsEarlyData: an agent that sends its first message right after
// its upgrade request, before it reads the 101 (pipelined), has it forwarded. It was
// refused: net/http had buffered it, and gorilla/websocket refuses a hijacked
// connection with buffered bytes ("client sent data before handshake is complete").
func TestProxyKeepsAnAgentsEarlyData(t *testing.T) {
	got := make(chan string, 1)
	agentURL := guardInFrontOf(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, b, err := c.Read(r.Context())
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
		_, _, _ = c.Read(r.Context())
	}))
	u, _ := url.Parse(agentURL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setup := []byte(`{"setup":{"model":"models/m"}}`)
	frame := []byte{0x81, 0x80 | byte(len(setup)), 1, 2, 3, 4} // text, masked with 01 02 03 04
	for i, b := range setup {
		frame = append(frame, b^byte(i%4+1))
	}
	req := "GET " + u.Path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := conn.Write(append([]byte(req), frame...)); err != nil { // one write: the message rides with the request
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "101") {
		t.Fatalf("the guard answered the pipelined upgrade with %q (%v), want 101", status, err)
	}
	select {
	case m := <-got:
		if m != string(setup) {
			t.Errorf("the provider got %q, want the agent's setup", m)
		}
	case <-time.After(10 * time.Second):
		t.Error("the agent's early setup never reached the provider")
	}
}

// TestProxyClosesBothSocketsAtTheEnd: an agent that hangs up while the provider
// streams leaves no socket open in the guard. gorilla/websocket closes nothing on a
// close frame, and a side whose queue had stopped (its peer's close answered) was
// closed by no one: its socket stayed open until a garbage collection ran its
// finalizer. The collector is off here, so an unclosed socket stays counted.
func TestProxyClosesBothSocketsAtTheEnd(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	agentURL, g := guardProxyInFrontOf(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := acceptSetup(w, r)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		go func() { _, _, _ = c.Read(ctx) }()
		for i := 0; c.Write(ctx, websocket.MessageBinary, audioFrame(false, i)) == nil; i++ {
		}
	}))
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := fds()
	for range 20 {
		a := dialAgent(ctx, t, agentURL)
		go func() {
			for {
				if _, _, err := a.Read(ctx); err != nil {
					return
				}
			}
		}()
		time.Sleep(50 * time.Millisecond) // the provider streams meanwhile
		_ = a.Close(websocket.StatusNormalClosure, "bye")
		a.CloseNow()
	}
	for g.Open() > 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	// The upstream handlers close their own sockets when they notice: waited for (a
	// socket the guard never closes stays open whatever the wait, the collector off).
	after := fds()
	for after > before+1 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		after = fds()
	}
	if after > before+1 {
		t.Errorf("open file descriptors: %d before 20 connections, %d after they ended", before, after)
	}
}

// TestProxyWriteTimeoutNamedToTheOtherSide: an agent that stops reading while the
// provider streams audio is closed by the write timeout's watchdog, and the provider
// hears why (1008 "the agent does not read", as when the frames queued for it pass
// their bound), not 1011 "the agent's connection broke": the watchdog's close was
// read as a broken connection.
func TestProxyWriteTimeoutNamedToTheOtherSide(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ended := make(chan error, 1)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := acceptSetup(w, r)
		if err != nil {
			ended <- err
			return
		}
		defer c.CloseNow()
		go func() { // streams until the guard closes it
			for i := 0; ; i++ {
				if err := c.Write(ctx, websocket.MessageBinary, audioFrame(false, i)); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		_, _, err = c.Read(ctx)
		ended <- err
	})
	agentURL, _ := guardWith(t, upstream, func(o *guard.Options) { o.WriteTimeout = 300 * time.Millisecond })
	// The agent's socket takes little, so that a write to it blocks long before the
	// guard's queue for it passes its 8 MiB bound.
	small := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}}}
	a, _, err := websocket.Dial(ctx, agentURL, &websocket.DialOptions{HTTPClient: small})
	if err != nil {
		t.Fatal(err)
	}
	defer a.CloseNow()
	if err := a.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/m"}}`)); err != nil {
		t.Fatal(err)
	}
	// The agent reads nothing from here on.
	err = <-ended
	if code := websocket.CloseStatus(err); code != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), "the agent does not read") {
		t.Errorf("the provider's connection ended with %v (code %d); want 1008, the agent does not read", err, code)
	}
}
