// Command profserve serves the arbiter's gRPC API on the embedded store the way
// `arbiter serve` builds it (server.NewGRPCServer over arbiter.Service, an info-level
// text logger, buffered as serve's by server.LogBuffer; an OK RPC's access line is at
// debug) while recording a CPU profile, so bench/run.sh can show where a RegisterCall's
// time goes under the same ghz load as the measured run. `arbiter serve` has no
// profiling flag; this wrapper is only for that picture, never for the published
// numbers.
//
//	profserve -listen 127.0.0.1:0 -tools testdata/tools/booking.yaml -cpuprofile cpu.prof -log arbiter.log
//
// It prints "listening ADDR", and stops (writing the profile) on SIGINT/SIGTERM or
// after -max.
package main

import (
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/policyfile"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address (loopback)")
	tools := flag.String("tools", "", "tool-policy file")
	prof := flag.String("cpuprofile", "cpu.prof", "CPU profile output")
	logPath := flag.String("log", os.DevNull, "log file (info level, text, one line per RPC as arbiter serve writes)")
	maxRun := flag.Duration("max", 2*time.Minute, "stop after this long at the latest")
	flag.Parse()

	policy := &arbiter.Policy{}
	var err error
	if *tools != "" {
		if policy, err = policyfile.Load(*tools); err != nil {
			log.Fatal(err)
		}
	} else if err := policy.Validate(); err != nil {
		log.Fatal(err)
	}
	lf, err := os.Create(*logPath)
	if err != nil {
		log.Fatal(err)
	}
	defer lf.Close()
	// Buffered as arbiter serve buffers its log (server.LogBuffer).
	lb := server.NewLogBuffer(lf)
	defer lb.Close()
	lg := slog.New(lb.Handler(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelInfo})))
	svc := &arbiter.Service{
		Engine: &arbiter.Engine{Policy: policy}, Store: memory.New(nil), Clock: arbiter.SystemClock{},
		IdleTTL: time.Hour, MaxWait: 30 * time.Second,
	}
	gs, _ := server.NewGRPCServer(server.New(svc, lg), server.Options{Logger: lg})
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	pf, err := os.Create(*prof)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s\n", lis.Addr())
	os.Stdout.Sync()
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		select {
		case <-ch:
		case <-time.After(*maxRun):
		}
		gs.Stop()
	}()
	_ = gs.Serve(lis)
	pprof.StopCPUProfile()
	if err := pf.Close(); err != nil {
		log.Fatal(err)
	}
}
