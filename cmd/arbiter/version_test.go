package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestVersionFlag: `arbiter --version` (and `arbiter serve --version`) prints one line
// with the version, the commit and the Go version, and exits 0. A test binary is not
// stamped: it reports devel and what the toolchain recorded.
func TestVersionFlag(t *testing.T) {
	want := regexp.MustCompile(`^arbiter \S+ \(commit \S+, ` + regexp.QuoteMeta(runtime.Version()) + `, ` + runtime.GOOS + "/" + runtime.GOARCH + `\)\n$`)
	for _, args := range [][]string{{"--version"}, {"serve", "--version"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || !want.MatchString(out) || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and a line matching %s", args, code, out, errOut, want)
		}
	}
}

// TestVersionStamped builds arbiter with the -ldflags scripts/build.sh computes: the
// binary's --version and the arbiter_build_info metric of `serve` carry the stamped
// version and commit.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	ldflags, err := exec.Command("../../scripts/build.sh", "--ldflags").Output()
	if err != nil {
		t.Fatalf("scripts/build.sh --ldflags: %v", err)
	}
	// The script's stamp, with a version and commit of this test's own.
	fields := strings.Fields(string(ldflags))
	for i, f := range fields {
		switch {
		case strings.Contains(f, "buildinfo.version="):
			fields[i] = f[:strings.Index(f, "=")+1] + "9.8.7-test"
		case strings.Contains(f, "buildinfo.commit="):
			fields[i] = f[:strings.Index(f, "=")+1] + "0123456789abcdef"
		}
	}
	bin := filepath.Join(t.TempDir(), "arbiter")
	if out, err := exec.Command("go", "build", "-ldflags", strings.Join(fields, " "), "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if want := "arbiter 9.8.7-test (commit 0123456789abcdef, " + runtime.Version(); err != nil || !strings.HasPrefix(string(out), want) {
		t.Fatalf("--version = %q (%v), want it to start with %q", out, err, want)
	}

	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	var log syncBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := regexp.MustCompile(`msg="metrics serving" addr=(\S+)`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(20 * time.Millisecond) {
		if m = addr.FindStringSubmatch(log.String()); m == nil && time.Now().After(deadline) {
			t.Fatalf("no metrics address in the log:\n%s", log.String())
		}
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `arbiter_build_info{commit="0123456789abcdef",go_version="` + runtime.Version() + `",version="9.8.7-test"} 1`
	if !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %s:\n%.3000s", want, body)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "arbiter serving"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no serving line:\n%s", log.String())
		}
	}
	if !regexp.MustCompile(`msg="arbiter serving" addr=\S+ .*version=9.8.7-test commit=0123456789abcdef`).MatchString(log.String()) {
		t.Errorf("the serving line lacks the version and commit:\n%s", log.String())
	}
}

// TestBuildScriptStampsWithoutVCS: scripts/build.sh, run right after a plain `go
// build`, compiles no package but main (it builds with go build's flags, so every
// other package comes from the build cache: as fast as go build; main is compiled
// again since its build info records the stamp's -ldflags), and its binary's
// --version names the checkout's commit even under GOFLAGS=-buildvcs=false, where a
// plain go build can only say "commit unknown". (It used to build with -trimpath and
// CGO_ENABLED=0, whose cache keys differ from go build's: minutes where go build took
// seconds.)
func TestBuildScriptStampsWithoutVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GOFLAGS=-buildvcs=false")
	plain := exec.Command("go", "build", "-o", filepath.Join(dir, "plain"), "./cmd/arbiter")
	plain.Dir, plain.Env = "../..", env
	if out, err := plain.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "plain"), "--version").Output()
	if err != nil || !strings.Contains(string(out), "(commit unknown,") {
		t.Fatalf("plain go build under -buildvcs=false: --version = %q (%v); this test assumes it cannot know its commit", out, err)
	}

	script := exec.Command("../../scripts/build.sh", "-o", filepath.Join(dir, "stamped"))
	script.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false -x") // -x: print every command the go tool runs
	var stderr bytes.Buffer
	script.Stderr = &stderr
	if err := script.Run(); err != nil {
		t.Fatalf("scripts/build.sh: %v\n%s", err, stderr.String())
	}
	var compiled []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		// The main package is compiled again: its build info records the -ldflags.
		if f := strings.Fields(line); len(f) > 0 && filepath.Base(f[0]) == "compile" && !strings.Contains(line, " -p main ") {
			compiled = append(compiled, line)
		}
	}
	if len(compiled) > 0 {
		t.Errorf("scripts/build.sh after go build compiled %d package(s) besides main, want 0 (every one from go build's cache), e.g.\n%.500s", len(compiled), compiled[0])
	}
	out, err = exec.Command(filepath.Join(dir, "stamped"), "--version").Output()
	if want := "(commit " + strings.TrimSpace(string(head)); err != nil || !strings.Contains(string(out), want) {
		t.Errorf("scripts/build.sh under -buildvcs=false: --version = %q (%v), want it to contain %q", out, err, want)
	}
}
