package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/store/memory"
	"github.com/voicearbiter/arbiter/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, "../..", func(t *testing.T, now func() time.Time) arbiter.Store {
		s := memory.New(now)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestJanitorDropsExpiredSessions: expired sessions go without any further request
// (Len counts without sweeping).
func TestJanitorDropsExpiredSessions(t *testing.T) {
	s := memory.New(nil)
	defer s.Close()
	for i := 0; i < 100; i++ {
		sess := arbiter.NewSession(arbiter.SessionKey{ID: fmt.Sprintf("s%d", i)}, time.Now())
		if err := s.Save(context.Background(), sess, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 100 {
		t.Fatalf("%d sessions stored, want 100", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions left 5 s after they expired", s.Len())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// BenchmarkTransition measures one transition (load, step, save) on the in-memory
// store.
func BenchmarkTransition(b *testing.B) {
	storetest.BenchTransition(b, "../..", func(b *testing.B) (arbiter.Store, func() int64) {
		s := memory.New(nil)
		b.Cleanup(func() { _ = s.Close() })
		return s, nil
	})
}
