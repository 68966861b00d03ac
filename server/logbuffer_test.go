package server_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/voicearbiter/arbiter/server"
)

// TestLogBufferOrderAndClose: lines written by one goroutine come out whole and in
// order, and Close writes out whatever is still held; a write after Close goes
// straight through.
func TestLogBufferOrderAndClose(t *testing.T) {
	var out lockedBuffer
	b := server.NewLogBuffer(&out)
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := b.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("after Close: %d bytes, want %d", len(out.String()), want.Len())
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := b.Write([]byte("late\n")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "line 999\nlate\n") {
		t.Fatalf("a write after Close is not out: %q", out.String()[len(out.String())-20:])
	}
}

// TestLogBufferConcurrent: lines of many goroutines through one slog handler come
// out whole, none lost, each goroutine's in its order.
func TestLogBufferConcurrent(t *testing.T) {
	var out lockedBuffer
	b := server.NewLogBuffer(&out)
	log := slog.New(b.Handler(slog.NewTextHandler(b, nil)))
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				log.Info("line", "w", w, "i", i)
			}
		})
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	n := 0
	for sc.Scan() {
		var w, i int
		if _, err := fmt.Sscanf(sc.Text()[strings.Index(sc.Text(), "w="):], "w=%d i=%d", &w, &i); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if i != next[w] {
			t.Fatalf("writer %d: line %d after %d", w, i, next[w]-1)
		}
		next[w]++
		n++
	}
	if n != writers*each {
		t.Fatalf("%d lines, want %d", n, writers*each)
	}
}

// TestLogBufferFull: past LogBufferSize a write takes what is held out first (on the
// writer), so the buffer never holds more than its size and nothing is dropped.
func TestLogBufferFull(t *testing.T) {
	var out lockedBuffer
	b := server.NewLogBuffer(&out)
	defer b.Close()
	line := strings.Repeat("x", 99) + "\n"
	total := 0
	for total <= 3*server.LogBufferSize {
		if _, err := b.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		total += len(line)
	}
	if held := total - len(out.String()); held > server.LogBufferSize || held < 0 {
		t.Fatalf("%d bytes written, %d out: %d held, at most %d", total, len(out.String()), held, server.LogBufferSize)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(out.String()) != total || strings.Count(out.String(), line) != total/len(line) {
		t.Fatalf("after Flush %d bytes out, want %d whole lines", len(out.String()), total/len(line))
	}
}

// TestLogBufferUrgent: through Handler, a warn line is out as soon as it is logged,
// with the info lines before it, in order; info lines alone may wait.
func TestLogBufferUrgent(t *testing.T) {
	var out lockedBuffer
	b := server.NewLogBuffer(&out)
	defer b.Close()
	log := slog.New(b.Handler(slog.NewTextHandler(b, nil))).With("component", "test")
	log.Info("first")
	log.WithGroup("g").Warn("second", "k", "v")
	got := out.String()
	i, j := strings.Index(got, "msg=first"), strings.Index(got, "msg=second")
	if i < 0 || j < i || !strings.Contains(got, "component=test") || !strings.Contains(got, "g.k=v") {
		t.Fatalf("after a warn line: %q", got)
	}
	log.Error("third")
	if !strings.Contains(out.String(), "msg=third") {
		t.Fatalf("after an error line: %q", out.String())
	}
}
