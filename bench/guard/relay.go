package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/coder/websocket"
	gorilla "github.com/gorilla/websocket"
)

// The relays are floors for the guard's numbers: what forwarding the same frames
// costs with no rule at all. tcp copies bytes (no WebSocket: the system calls and the
// kernel's loopback alone); coder reads and writes whole messages with
// coder/websocket, the guard's library, the way the guard does (one copy per
// message); gorilla does the same with gorilla/websocket (16 KiB buffers each way).
// Each runs as its own process (this binary, -serve-relay) so that its CPU is its
// own, and prints proxy_addr=ADDR on stderr as the guard's serve does.
var relays = map[string]func(l net.Listener, up string){
	"tcp":     tcpRelay,
	"coder":   func(l net.Listener, up string) { _ = http.Serve(l, coderRelay(up)) },
	"gorilla": func(l net.Listener, up string) { _ = http.Serve(l, gorillaRelay(up)) },
}

func serveRelay(mode, up string) {
	run, ok := relays[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "-relay: %q is not tcp, coder or gorilla\n", mode)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "proxy_addr=%s \n", l.Addr())
	run(l, up)
}

func tcpRelay(l net.Listener, up string) {
	addr := up[len("ws://"):]
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			s, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				return
			}
			// A read and a write per chunk (not io.Copy: between two TCP sockets it
			// splices, which no WebSocket proxy can).
			cp := func(from, to net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := from.Read(buf)
					if n > 0 {
						if _, werr := to.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				_ = from.Close()
				_ = to.Close()
			}
			go cp(c, s)
			cp(s, c)
		}()
	}
}

func coderRelay(up string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, _, err := websocket.Dial(r.Context(), up+r.URL.Path, nil)
		if err != nil {
			return
		}
		a, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		a.SetReadLimit(1 << 24)
		s.SetReadLimit(1 << 24)
		cp := func(from, to *websocket.Conn) {
			var buf bytes.Buffer
			for {
				typ, rd, err := from.Reader(context.Background())
				if err != nil {
					break
				}
				buf.Reset()
				if _, err := buf.ReadFrom(rd); err != nil {
					break
				}
				if to.Write(context.Background(), typ, bytes.Clone(buf.Bytes())) != nil {
					break
				}
			}
			_ = from.CloseNow()
			_ = to.CloseNow()
		}
		go cp(a, s)
		cp(s, a)
	}
}

func gorillaRelay(up string) http.HandlerFunc {
	upg := gorilla.Upgrader{ReadBufferSize: 16 << 10, WriteBufferSize: 16 << 10, CheckOrigin: func(*http.Request) bool { return true }}
	dialer := gorilla.Dialer{ReadBufferSize: 16 << 10, WriteBufferSize: 16 << 10}
	return func(w http.ResponseWriter, r *http.Request) {
		s, _, err := dialer.Dial(up+r.URL.Path, nil)
		if err != nil {
			return
		}
		a, err := upg.Upgrade(w, r, nil)
		if err != nil {
			_ = s.Close()
			return
		}
		cp := func(from, to *gorilla.Conn) {
			var buf bytes.Buffer
			for {
				typ, rd, err := from.NextReader()
				if err != nil {
					break
				}
				buf.Reset()
				if _, err := buf.ReadFrom(rd); err != nil {
					break
				}
				if to.WriteMessage(typ, bytes.Clone(buf.Bytes())) != nil {
					break
				}
			}
			_ = from.Close()
			_ = to.Close()
		}
		go cp(a, s)
		cp(s, a)
	}
}
