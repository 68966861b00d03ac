package main

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// serveCmd is `arbiter serve`.
type serveCmd struct {
	Listen       string        `default:"127.0.0.1:50051" env:"ARBITER_LISTEN" help:"Address to listen on (host:port; port 0 picks a free one)."`
	Tools        string        `env:"ARBITER_TOOLS" type:"existingfile" help:"Tool-policy YAML file. Without one every tool is read-only pass-through."`
	LogLevel     string        `default:"info" enum:"debug,info,warn,error" env:"ARBITER_LOG_LEVEL" help:"Log level: debug, info, warn, error."`
	LogFormat    string        `default:"text" enum:"text,json" env:"ARBITER_LOG_FORMAT" help:"Log format: text or json."`
	IdleTTL      time.Duration `default:"1h" env:"ARBITER_IDLE_TTL" help:"A session expires this long after its last change."`
	MaxWait      time.Duration `default:"30s" env:"ARBITER_MAX_WAIT" help:"Cap on a Decide long-poll."`
	DrainTimeout time.Duration `default:"10s" env:"ARBITER_DRAIN_TIMEOUT" help:"On SIGTERM, how long in-flight RPCs may finish before the server stops hard."`
}

// Run starts the server and blocks until the context ends (SIGINT/SIGTERM), then
// drains: health turns NOT_SERVING, GracefulStop races DrainTimeout, then the store
// closes.
func (c *serveCmd) Run(env *runEnv) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return err
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	if c.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(env.stderr, hopts))
	} else {
		log = slog.New(slog.NewTextHandler(env.stderr, hopts))
	}
	policy, err := loadPolicy(c.Tools)
	if err != nil {
		return err
	}
	if c.IdleTTL <= 0 || c.MaxWait <= 0 || c.DrainTimeout <= 0 {
		return fmt.Errorf("--idle-ttl, --max-wait and --drain-timeout must be positive")
	}
	store := memory.New(nil)
	svc := &arbiter.Service{
		Engine: &arbiter.Engine{Policy: policy}, Store: store, Clock: arbiter.SystemClock{},
		IdleTTL: c.IdleTTL, MaxWait: c.MaxWait,
	}
	gs, hs := server.NewGRPCServer(server.New(svc, log), server.Options{Logger: log})
	lis, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return err
	}
	log.Info("arbiter serving", "addr", lis.Addr().String(), "store", "memory", "tools", len(policy.Tools))
	if env.ready != nil {
		env.ready <- lis.Addr().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-env.ctx.Done():
	}
	log.Info("draining", "timeout", c.DrainTimeout)
	hs.Shutdown() // every service NOT_SERVING: load balancers stop sending
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.DrainTimeout):
		log.Warn("drain timeout: stopping hard")
		gs.Stop()
	}
	return store.Close()
}

// loadPolicy loads the tool policy, or the empty (all pass-through) policy for "".
func loadPolicy(path string) (*arbiter.Policy, error) {
	if path == "" {
		p := &arbiter.Policy{}
		return p, p.Validate()
	}
	return policyfile.Load(path)
}
