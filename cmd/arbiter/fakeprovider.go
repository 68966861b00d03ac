package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/voicearbiter/arbiter/fakeprovider"
)

// fakeProviderCmd is `arbiter fake-provider`: serve (the default) and check.
type fakeProviderCmd struct {
	Serve fpServeCmd `cmd:"" default:"withargs" help:"Serve Gemini Live and OpenAI Realtime over WebSocket, playing recorded sessions (the default subcommand)."`
	Check fpCheckCmd `cmd:"" help:"Check a fake-provider record against the reference replay of each trace: one response per live call id, none for dead ids, each note once, the same commits."`
}

// fpServeCmd is `arbiter fake-provider [serve]`.
type fpServeCmd struct {
	Listen      string   `default:"127.0.0.1:0" help:"Address to listen on (host:port; port 0 picks a free one, printed in the \"arbiter fake-provider serving\" log line as addr=)."`
	Trace       []string `required:"" sep:"none" placeholder:"FILE|DIR|GLOB" help:"Traces to play, one per new session in order: a file, a directory (its *.jsonl) or a glob; repeatable. A connection under /trace/NAME/ (or with ?trace=NAME) plays that trace instead."`
	Record      string   `placeholder:"FILE" help:"Write every client message (and every server message, open, close and warning) to FILE as JSON lines; - for stdout."`
	RecordAudio bool     `name:"record-audio" help:"Keep base64 audio in the record (elided by default)."`
	ExitDone    bool     `name:"exit-when-done" help:"Exit 0 once every trace has been played to its end and no session is open or waiting for a reconnect."`
	TLSCert     string   `name:"tls-cert" type:"existingfile" help:"Serve TLS (wss://) with this PEM certificate (needs --tls-key)."`
	TLSKey      string   `name:"tls-key" type:"existingfile" help:"PEM private key for --tls-cert."`
	SelfSigned  string   `name:"tls-self-signed" placeholder:"CERTFILE" help:"Serve TLS with a fresh self-signed certificate for 127.0.0.1/localhost, written to CERTFILE for clients to trust (NODE_EXTRA_CA_CERTS=CERTFILE); the openai SDK's OpenAIRealtimeWS only connects with wss://."`
	LogLevel    string   `default:"info" enum:"debug,info,warn,error" help:"Log level: debug, info, warn, error."`
	LogFormat   string   `default:"text" enum:"text,json" help:"Log format: text or json."`
}

// Run serves until the context ends (SIGINT/SIGTERM) or, with --exit-when-done, every
// trace has been played; open sessions are then closed with 1001 (going away) and the
// record is closed. Errors: a trace that does not parse, a listen or TLS error, a
// record that cannot be written.
func (c *fpServeCmd) Run(env *runEnv) error {
	log, err := (&serveCmd{LogLevel: c.LogLevel, LogFormat: c.LogFormat}).logger(env.stderr)
	if err != nil {
		return err
	}
	traces, err := fakeprovider.LoadTraces(c.Trace, env.stderr)
	if err != nil {
		return err
	}
	tlsConf, err := c.tls()
	if err != nil {
		return err
	}
	var rec io.Writer
	switch c.Record {
	case "":
	case "-":
		rec = env.stdout
	default:
		f, err := os.Create(c.Record)
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		defer f.Close()
		rec = f
	}
	srv, err := fakeprovider.New(fakeprovider.Options{Traces: traces, Record: rec, KeepAudio: c.RecordAudio, Log: log})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	scheme := "ws"
	if tlsConf != nil {
		lis, scheme = tls.NewListener(lis, tlsConf), "wss"
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(lis) }()
	addr := lis.Addr().String()
	log.Info("arbiter fake-provider serving", "addr", addr, "traces", len(traces), "tls", tlsConf != nil,
		"gemini", scheme+"://"+addr+"/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
		"openai", scheme+"://"+addr+"/v1/realtime", "record", c.Record)
	if env.ready != nil {
		env.ready <- addr
	}
	var done <-chan struct{}
	if c.ExitDone {
		done = srv.Done()
	}
	select {
	case err = <-errc:
	case <-env.ctx.Done():
	case <-done:
		log.Info("every trace played")
	}
	rerr := srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
	if err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("--record: %w", rerr)
	}
	return nil
}

// tls is the TLS config --tls-cert/--tls-key or --tls-self-signed ask for; nil for
// plain ws://. Flags that do not go together and a certificate pair that cannot be
// used are usage errors (exit 2, as serve's); a self-signed certificate that cannot
// be made is not.
func (c *fpServeCmd) tls() (*tls.Config, error) {
	switch {
	case c.SelfSigned != "" && (c.TLSCert != "" || c.TLSKey != ""):
		return nil, usageError{fmt.Errorf("--tls-self-signed and --tls-cert/--tls-key: pick one")}
	case c.SelfSigned != "":
		conf, err := fakeprovider.SelfSignedTLS(c.SelfSigned)
		if err != nil {
			return nil, fmt.Errorf("--tls-self-signed: %w", err)
		}
		return conf, nil
	case c.TLSCert != "" || c.TLSKey != "":
		if c.TLSCert == "" || c.TLSKey == "" {
			return nil, usageError{fmt.Errorf("--tls-cert and --tls-key go together")}
		}
		cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return nil, usageError{fmt.Errorf("--tls-cert %s and --tls-key %s: %w", c.TLSCert, c.TLSKey, err)}
		}
		return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
	}
	return nil, nil
}
