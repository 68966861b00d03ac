package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionSources(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/voicearbiter/arbiter", Version: "(devel)"}}
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs", Value: "git"})
		if rev != "" {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.revision", Value: rev})
		}
		if modified != "" {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return bi
	}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/voicearbiter/arbiter", Version: "v0.2.0"}}
	for _, tc := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            Info
	}{
		{"stamped", "0.1.0", "abc123", vcs("def456", "true"), Info{Version: "0.1.0", Commit: "abc123"}},
		{"vcs only", "", "", vcs("def456", "false"), Info{Version: "devel", Commit: "def456"}},
		{"vcs dirty", "", "", vcs("def456", "true"), Info{Version: "devel", Commit: "def456-dirty"}},
		{"go install @version", "", "", installed, Info{Version: "v0.2.0", Commit: "unknown"}},
		{"stamped version, vcs commit", "0.1.0", "", vcs("def456", ""), Info{Version: "0.1.0", Commit: "def456"}},
		{"nothing recorded", "", "", vcs("", ""), Info{Version: "devel", Commit: "unknown"}},
		{"no build info", "", "", nil, Info{Version: "devel", Commit: "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.GoVersion = runtime.Version()
			if got := get(tc.version, tc.commit, tc.bi); got != tc.want {
				t.Errorf("get = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVersionString(t *testing.T) {
	s := Info{Version: "0.1.0", Commit: "abc123", GoVersion: "go1.26.8"}.String()
	if want := "arbiter 0.1.0 (commit abc123, go1.26.8, " + runtime.GOOS + "/" + runtime.GOARCH + ")"; s != want {
		t.Errorf("String = %q, want %q", s, want)
	}
	if got := Get(); got.Version == "" || got.Commit == "" || !strings.HasPrefix(got.GoVersion, "go") {
		t.Errorf("Get = %+v: every field must be set", got)
	}
}
