package server

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"go.uber.org/zap/zapcore"
)

// LogBuffer sizes: what a LogBuffer holds before a write goes through, and how often
// it is written out when it is not full.
const (
	LogBufferSize  = 256 << 10
	LogBufferFlush = 100 * time.Millisecond
)

// LogBuffer takes the log's write off the RPC: lines go into a bounded in-memory
// buffer (LogBufferSize bytes), which a background goroutine writes to the underlying
// writer every LogBufferFlush, so a busy server makes one write call per interval
// instead of one per line (each line was one write(2) before). It
// is zap's zapcore.BufferedWriteSyncer, with:
//
//   - Full: a line that does not fit writes the buffer out first, on the caller (the
//     RPC that logs waits for that one write, as every line did before); nothing is
//     dropped, so nothing needs counting.
//   - Order: one buffer behind one lock, so lines come out in the order they were
//     written, by whichever goroutine.
//   - Urgent lines: a logger built with Handler writes the buffer out right after a
//     record at warn or above, so errors are never held back and a reader waiting for
//     one sees it at once.
//   - Close writes out what is held and stops the goroutine; a write after Close goes
//     straight through. A line written less than LogBufferFlush before the process
//     dies without Close (a crash, SIGKILL) is lost.
//   - Errors: the first write error of the underlying writer is kept (bufio) and
//     every later write fails with it; slog drops such lines.
//
// The underlying writer is never Synced (fsync): it is a stream (stderr) or a file
// the log is appended to. Safe for concurrent use.
type LogBuffer struct {
	bw     *zapcore.BufferedWriteSyncer
	closed atomic.Bool
}

// NewLogBuffer returns a LogBuffer writing to w. Close it when done.
func NewLogBuffer(w io.Writer) *LogBuffer {
	b := &LogBuffer{bw: &zapcore.BufferedWriteSyncer{
		WS:            zapcore.AddSync(writeOnly{w}),
		Size:          LogBufferSize,
		FlushInterval: LogBufferFlush,
	}}
	_, _ = b.bw.Write(nil) // starts the goroutine now, so that Close always stops it
	return b
}

// writeOnly hides an *os.File's Sync from zapcore.AddSync, which would fsync it on
// every flush.
type writeOnly struct{ io.Writer }

// Write buffers p (one whole line, as slog's handlers write them).
func (b *LogBuffer) Write(p []byte) (int, error) {
	n, err := b.bw.Write(p)
	if err == nil && b.closed.Load() {
		err = b.bw.Sync()
	}
	return n, err
}

// Flush writes out what is buffered now.
func (b *LogBuffer) Flush() error { return b.bw.Sync() }

// Close writes out what is buffered and stops the background goroutine. Idempotent.
func (b *LogBuffer) Close() error {
	b.closed.Store(true)
	return b.bw.Stop()
}

// Handler wraps h, a handler writing to b, so that a record at warn or above is
// written out at once (Flush after it); records below warn wait for the interval.
func (b *LogBuffer) Handler(h slog.Handler) slog.Handler { return urgentHandler{h, b} }

type urgentHandler struct {
	slog.Handler
	b *LogBuffer
}

func (h urgentHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.b.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h urgentHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return urgentHandler{h.Handler.WithAttrs(as), h.b}
}

func (h urgentHandler) WithGroup(g string) slog.Handler {
	return urgentHandler{h.Handler.WithGroup(g), h.b}
}
