// Command arbiter runs the Arbiter gRPC service (`arbiter serve`), replays recorded
// voice sessions through the decision engine (`arbiter replay`), exports a live session
// as a trace (`arbiter export`), and plays sessions to an agent as a fake Gemini Live /
// OpenAI Realtime server (`arbiter fake-provider`, `arbiter fake-provider check`).
//
// Every serve flag can also be set with an ARBITER_* environment variable; flags win.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/voicearbiter/arbiter/internal/buildinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is the command line.
type cli struct {
	Version kong.VersionFlag `help:"Print the version, the commit and the Go version it was built with, and exit."`

	Serve  serveCmd  `cmd:"" help:"Run the gRPC service (embedded in-memory store unless a Redis URL is given)."`
	Replay replayCmd `cmd:"" help:"Replay session traces (docs/trace-format.md): in-process on a virtual clock, or against running servers in real time (--target); --diff compares two policies on them."`
	Export exportCmd `cmd:"" help:"Export a session of a running server (GetHistory) as a trace, to replay it locally."`

	FakeProvider fakeProviderCmd `cmd:"" name:"fake-provider" help:"A fake Gemini Live / OpenAI Realtime server that plays recorded sessions on the real wire protocols, records what the agent sends, and checks the record (docs/fake-provider.md)."`
}

// run parses args and runs the command; it returns the process exit code: 0 success,
// 1 a failed replay or server error, 2 a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return (&runEnv{ctx: ctx, stdout: stdout, stderr: stderr}).run(args)
}

// run parses args and runs the command in env; see the package-level run.
func (env *runEnv) run(args []string) int {
	stdout, stderr := env.stdout, env.stderr
	var c cli
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("arbiter"),
		kong.Description("Arbiter: one authoritative answer about a realtime voice agent's function calls."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.Vars{"version": buildinfo.Get().String()},
		signedValues(),
	)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit // --help, --version
	}
	if err != nil {
		fmt.Fprintf(stderr, "arbiter: %v\n", err)
		return 2
	}
	if err := kctx.Run(env); err != nil {
		var e exitError
		if errors.As(err, &e) { // kong wraps what Run returns
			return int(e)
		}
		fmt.Fprintf(stderr, "arbiter: %v\n", err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	return 0
}

// runEnv is what every command runs with.
type runEnv struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	// ready, when set, receives serve's listening address.
	ready chan<- string
	// getenv, when set, replaces os.Getenv for the OTEL_* variables serve reads itself
	// (the exporters read theirs from the process environment).
	getenv func(string) string
}

// lookupEnv is env's getenv, or os.Getenv.
func (env *runEnv) lookupEnv() func(string) string {
	if env.getenv != nil {
		return env.getenv
	}
	return os.Getenv
}

// exitError ends the process with that code without printing anything more.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// usageError is a flag's value out of its range or a flag naming a file that is not
// one: exit code 2, as kong's own parse errors.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// signedValues lets a flag of a signed type (a duration, an int, a float) take a value
// that starts with a hyphen after a space ("--max-wait -1s", "--rate-limit -1") as it
// takes one after "=": kong reads a hyphen-led word as a short flag, and its "expected
// duration value but got \"-1s\" (short flag)" would stand in for the range check's
// "--max-wait=-1s: must be positive". Only a word that parses as the flag's type is
// taken (a flag after a flag that lacks its value stays a flag: kong's error names the
// one without a value). kong.WithHyphenPrefixedParameters would take any word,
// "--tools --listen" making a file of "--listen".
func signedValues() kong.Option {
	defaults := kong.NewRegistry().RegisterDefaults()
	isFloat := func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }
	isInt := func(s string) bool { _, err := strconv.ParseInt(s, 0, 64); return err == nil }
	isDuration := func(s string) bool { _, err := time.ParseDuration(s); return err == nil }
	return kong.OptionFunc(func(k *kong.Kong) error {
		dur := reflect.TypeOf(time.Duration(0))
		if err := kong.TypeMapper(dur, hyphenValue{defaults.ForType(dur), isDuration}).Apply(k); err != nil {
			return err
		}
		for _, t := range []reflect.Type{reflect.TypeOf(0), reflect.TypeOf(int8(0)), reflect.TypeOf(int16(0)), reflect.TypeOf(int32(0)),
			reflect.TypeOf(int64(0)), reflect.TypeOf(float32(0)), reflect.TypeOf(float64(0))} {
			parses := isInt
			if t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 {
				parses = isFloat
			}
			if err := kong.KindMapper(t.Kind(), hyphenValue{defaults.ForType(t), parses}).Apply(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// hyphenValue is kong's mapper next, given the next word as the flag's value when it
// starts with one hyphen and parses (signedValues).
type hyphenValue struct {
	next   kong.Mapper
	parses func(string) bool
}

func (m hyphenValue) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	if t := ctx.Scan.Peek(); t.Type == kong.UntypedToken {
		if s, ok := t.Value.(string); ok && strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && m.parses(s) {
			ctx.Scan.Pop()
			ctx.Scan.PushTyped(s, kong.FlagValueToken)
		}
	}
	return m.next.Decode(ctx, target)
}
