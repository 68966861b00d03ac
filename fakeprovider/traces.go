package fakeprovider

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/voicearbiter/arbiter/replay"
)

// Trace is one recorded session the server can play.
type Trace struct {
	// Name is the file's base name without its extension ("C_on_run2"); connections
	// and record lines name the trace by it.
	Name string
	// Path is the file it was read from.
	Path string
	// Events are the parsed lines (ref_* lines included; they are never played).
	Events []replay.TraceEvent
}

// LoadTraces reads the traces that args name, in order: a file, a directory (its
// *.jsonl files, sorted by name) or a glob pattern (its matches, sorted). Warnings of
// the trace parser (unknown events) go to warn. Errors: an argument that matches no
// file, a malformed trace (its file and line), two traces with the same name.
func LoadTraces(args []string, warn io.Writer) ([]Trace, error) {
	var paths []string
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			m, _ := filepath.Glob(filepath.Join(a, "*.jsonl"))
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no *.jsonl trace in the directory", a)
			}
			sort.Strings(m)
			paths = append(paths, m...)
		case err == nil:
			paths = append(paths, a)
		default:
			m, gerr := filepath.Glob(a)
			if gerr != nil || len(m) == 0 {
				return nil, fmt.Errorf("%s: no such trace file, directory or pattern", a)
			}
			sort.Strings(m)
			paths = append(paths, m...)
		}
	}
	seen := map[string]string{}
	var out []Trace
	for _, p := range paths {
		events, err := replay.ReadTraceFile(p, warn)
		if err != nil {
			return nil, err
		}
		name := TraceName(p)
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("%s and %s are both named %q: connections pick traces by name", prev, p, name)
		}
		seen[name] = p
		out = append(out, Trace{Name: name, Path: p, Events: events})
	}
	return out, nil
}

// TraceName is the name a trace file goes by: its base name without the extension.
func TraceName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}
