package arbiter_test

import (
	"testing"

	"github.com/voicearbiter/arbiter/arbiter/enginetest"
)

// TestGoldens runs the behaviour goldens in testdata/ (datadriven scripts: engine
// events at explicit times, each followed by the engine's output; the command language
// is enginetest's) on the engine alone. `go test ./arbiter -run TestGoldens -rewrite`
// regenerates the expected output: read the diff. store/storetest runs the same
// scripts through arbiter.Service on every store.
func TestGoldens(t *testing.T) {
	enginetest.Run(t, "testdata", enginetest.Direct)
}
