package memory_test

import (
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
