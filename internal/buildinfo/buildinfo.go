// Package buildinfo says which build of arbiter is running: its version, the commit it
// was built from and the Go toolchain that built it.
//
// The version and commit are stamped at build time with the linker:
//
//	go build -ldflags "-X github.com/voicearbiter/arbiter/internal/buildinfo.version=0.1.0 \
//	  -X github.com/voicearbiter/arbiter/internal/buildinfo.commit=$(git rev-parse HEAD)" ./cmd/arbiter
//
// (scripts/build.sh and the Dockerfile do this). Unstamped, they come from what the Go
// toolchain recorded in the binary (runtime/debug.ReadBuildInfo): the module version
// for `go install ...@v0.1.0`, and the vcs.revision of a build inside a git checkout.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X; empty when not stamped.
var (
	version string
	commit  string
)

// Info describes the running binary.
type Info struct {
	// Version is the release version ("0.1.0"), or "devel" when neither the linker
	// nor the module system recorded one.
	Version string
	// Commit is the git commit the binary was built from, with "-dirty" appended when
	// the toolchain recorded uncommitted changes; "unknown" when nothing recorded it
	// (e.g. a build from a source tree without .git, as in the Docker build when the
	// REVISION build argument is not given).
	Commit string
	// GoVersion is the Go toolchain that built the binary (runtime.Version()).
	GoVersion string
}

// Get returns the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return get(version, commit, bi)
}

// get is Get on explicit inputs (bi may be nil).
func get(version, commit string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, GoVersion: runtime.Version()}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" && modified == "true" {
				rev += "-dirty"
			}
			info.Commit = rev
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// String is the one line `arbiter --version` prints:
// "arbiter 0.1.0 (commit 0123abc…, go1.26.8, linux/amd64)".
func (i Info) String() string {
	return "arbiter " + i.Version + " (commit " + i.Commit + ", " + i.GoVersion + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}
