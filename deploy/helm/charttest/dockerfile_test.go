package charttest

import (
	"bytes"
	"debug/elf"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// The repository root (this package is deploy/helm/charttest).
const repoRoot = "../../.."

// parsedDockerfile is the Dockerfile as BuildKit's own frontend reads it.
type parsedDockerfile struct {
	stages   []instructions.Stage
	metaArgs map[string]string
	warnings []string
}

func parseDockerfile(t testing.TB) parsedDockerfile {
	t.Helper()
	res, err := parser.Parse(bytes.NewReader(readFile(t, filepath.Join(repoRoot, "Dockerfile"))))
	if err != nil {
		t.Fatalf("parse Dockerfile: %v", err)
	}
	var p parsedDockerfile
	for _, w := range res.Warnings {
		p.warnings = append(p.warnings, w.Short)
	}
	// The rule checks of `docker build --check`, experimental ones included.
	lint := linter.New(&linter.Config{
		ExperimentalAll: true,
		Warn: func(rule, desc, url, msg string, loc []parser.Range) {
			p.warnings = append(p.warnings, rule+": "+msg)
		},
	})
	stages, metaArgs, err := instructions.Parse(res.AST, lint)
	if err != nil {
		t.Fatalf("Dockerfile instructions: %v", err)
	}
	p.stages = stages
	p.metaArgs = map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if kv.Value != nil {
				p.metaArgs[kv.Key] = *kv.Value
			}
		}
	}
	return p
}

func commands[T instructions.Command](s instructions.Stage) []T {
	var out []T
	for _, c := range s.Commands {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// digestRef is an image reference pinned by digest: name:tag@sha256:<64 hex>.
var digestRef = regexp.MustCompile(`^([^@\s]+):([^@:/\s]+)@sha256:[a-f0-9]{64}$`)

// TestDockerfile checks the Dockerfile (it cannot be built here: no Docker engine):
// two stages, a static build in golang at go.mod's Go version, a distroless/static
// nonroot final stage running as 65532 with the exec-form ENTRYPOINT
// ["/arbiter","serve"], both base images pinned by digest, the version and commit
// stamped into the binary and the OCI labels set.
func TestDockerfile(t *testing.T) {
	p := parseDockerfile(t)
	if len(p.warnings) > 0 {
		t.Errorf("Dockerfile warnings: %q", p.warnings)
	}
	if len(p.stages) != 2 {
		t.Fatalf("stages = %d, want 2 (build, final)", len(p.stages))
	}
	build, final := p.stages[0], p.stages[1]

	// Builder: golang at the main module's Go version (go.mod's go line: the image's
	// GOTOOLCHAIN=local refuses an older Go), pinned by digest.
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+(\.\d+)?)\s*$`).FindSubmatch(readFile(t, filepath.Join(repoRoot, "go.mod")))
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	base := strings.NewReplacer("${GO_VERSION}", p.metaArgs["GO_VERSION"], "${GO_DIGEST}", p.metaArgs["GO_DIGEST"]).Replace(build.BaseName)
	m := digestRef.FindStringSubmatch(base)
	if m == nil || m[1] != "golang" || m[2] != string(goVersion[1]) || build.Name != "build" {
		t.Errorf("builder = %q AS %q, want golang:%s@sha256:<digest> AS build (go.mod says go %s)", base, build.Name, goVersion[1], goVersion[1])
	}
	var buildCmd string
	for _, r := range commands[*instructions.RunCommand](build) {
		line := strings.Join(r.CmdLine, " ")
		if strings.Contains(line, "go build") {
			buildCmd = line
		}
	}
	const pkg = "github.com/voicearbiter/arbiter/internal/buildinfo"
	for _, want := range []string{
		"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w `, "-X " + pkg + ".version=${VERSION}", "-X " + pkg + ".commit=${REVISION}",
		"-o /out/arbiter", "./cmd/arbiter",
	} {
		if !strings.Contains(buildCmd, want) {
			t.Errorf("go build command %q lacks %q", buildCmd, want)
		}
	}
	// The variables the stamp reads are declared in the builder stage.
	if args := stageArgs(build); !args["VERSION"] || !args["REVISION"] {
		t.Errorf("builder ARGs %v lack VERSION or REVISION", args)
	}

	// Final stage: distroless static nonroot, pinned by digest, nothing run in it.
	if m := digestRef.FindStringSubmatch(final.BaseName); m == nil || !strings.HasPrefix(m[1], "gcr.io/distroless/static") || m[2] != "nonroot" {
		t.Errorf("final base = %q, want gcr.io/distroless/static*:nonroot@sha256:<digest>", final.BaseName)
	}
	labels := map[string]string{}
	for _, l := range commands[*instructions.LabelCommand](final) {
		for _, kv := range l.Labels {
			labels[kv.Key] = strings.Trim(kv.Value, `"`)
		}
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.title":    "arbiter",
		"org.opencontainers.image.source":   "https://github.com/voicearbiter/arbiter",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version":  "${VERSION}",
		"org.opencontainers.image.revision": "${REVISION}",
	} {
		if labels[k] != want {
			t.Errorf("LABEL %s = %q, want %q", k, labels[k], want)
		}
	}
	if labels["org.opencontainers.image.description"] == "" {
		t.Errorf("no LABEL org.opencontainers.image.description")
	}
	if args := stageArgs(final); !args["VERSION"] || !args["REVISION"] {
		t.Errorf("final stage ARGs %v lack VERSION or REVISION (the labels would be empty)", args)
	}
	if runs := commands[*instructions.RunCommand](final); len(runs) != 0 {
		t.Errorf("final stage runs commands (no shell there): %v", runs)
	}
	copies := commands[*instructions.CopyCommand](final)
	if len(copies) != 1 || copies[0].From != "build" || !slices.Equal(copies[0].SourcePaths, []string{"/out/arbiter"}) || copies[0].DestPath != "/arbiter" {
		t.Errorf("final COPY = %+v, want --from=build /out/arbiter /arbiter", copies)
	}
	users := commands[*instructions.UserCommand](final)
	if len(users) == 0 {
		t.Fatal("final stage has no USER")
	}
	if u, _, _ := strings.Cut(users[len(users)-1].User, ":"); u != "65532" {
		t.Errorf("USER = %q, want 65532 (the chart's runAsUser)", users[len(users)-1].User)
	}
	var ports []string
	for _, e := range commands[*instructions.ExposeCommand](final) {
		ports = append(ports, e.Ports...)
	}
	slices.Sort(ports)
	if !slices.Equal(ports, []string{"50051", "8081", "9090"}) {
		t.Errorf("EXPOSE = %v, want 50051 8081 9090", ports)
	}
	eps := commands[*instructions.EntrypointCommand](final)
	if len(eps) != 1 || eps[0].PrependShell || !slices.Equal(eps[0].CmdLine, []string{"/arbiter", "serve"}) {
		t.Errorf("ENTRYPOINT = %+v, want exec form [\"/arbiter\",\"serve\"]", eps)
	}
	env := map[string]string{}
	for _, e := range commands[*instructions.EnvCommand](final) {
		for _, kv := range e.Env {
			env[kv.Key] = kv.Value
		}
	}
	if env["ARBITER_LISTEN"] != ":50051" {
		t.Errorf("ENV ARBITER_LISTEN = %q, want :50051 (the binary defaults to 127.0.0.1)", env["ARBITER_LISTEN"])
	}
}

// stageArgs lists the ARGs a stage declares.
func stageArgs(s instructions.Stage) map[string]bool {
	out := map[string]bool{}
	for _, a := range commands[*instructions.ArgCommand](s) {
		for _, kv := range a.Args {
			out[kv.Key] = true
		}
	}
	return out
}

// TestDockerfileChecksCatchMistakes proves the checks above can fail: a shell-form
// ENTRYPOINT and a root USER are visible to the parser.
func TestDockerfileChecksCatchMistakes(t *testing.T) {
	bad := "FROM scratch\nUSER root\nENTRYPOINT /arbiter serve\n"
	res, err := parser.Parse(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := commands[*instructions.UserCommand](stages[0]); u[0].User != "root" {
		t.Errorf("USER = %q", u[0].User)
	}
	if e := commands[*instructions.EntrypointCommand](stages[0]); !e[0].PrependShell {
		t.Errorf("shell-form ENTRYPOINT not seen as shell form")
	}
}

// buildContext lists the files `docker build .` sends, after .dockerignore.
func buildContext(t testing.TB) []string {
	t.Helper()
	patterns, err := ignorefile.ReadAll(bytes.NewReader(readFile(t, filepath.Join(repoRoot, ".dockerignore"))))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		excluded, err := pm.MatchesOrParentMatches(rel)
		if err != nil {
			return err
		}
		if excluded {
			if d.IsDir() && !pm.Exclusions() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDockerignore: the context holds what the build needs (go.mod, go.sum, the main
// module's non-test Go files) and none of .git, the nested modules, or test data.
func TestDockerignore(t *testing.T) {
	files := buildContext(t)
	t.Logf("build context: %d files", len(files))
	for _, want := range []string{"go.mod", "go.sum", "cmd/arbiter/main.go", "cmd/arbiter/serve.go", "server/server.go"} {
		if !slices.Contains(files, want) {
			t.Errorf("build context lacks %s", want)
		}
	}
	for _, f := range files {
		for _, prefix := range []string{".git/", "deploy/", "bench/", "testdata/", "clients/"} {
			if strings.HasPrefix(f, prefix) {
				t.Errorf("build context holds %s", f)
			}
		}
		if strings.HasSuffix(f, "_test.go") {
			t.Errorf("build context holds test file %s", f)
		}
	}
}

// TestDockerBuildStep runs the Dockerfile's own `go build` RUN line (as BuildKit
// would, under sh with TARGETOS/TARGETARCH set) on a copy of the build context, then
// checks the binary is static (the final stage has no libc) and that its ENTRYPOINT
// subcommand exists. It is the part of `docker build` that can run without a Docker
// engine. It compiles the whole server from scratch (-trimpath shares no build cache
// with ordinary builds: minutes on 2 cores), so it runs only with
// ARBITER_DOCKER_BUILD_STEP=1 (deploy/helm/test.sh --docker-build).
func TestDockerBuildStep(t *testing.T) {
	if os.Getenv("ARBITER_DOCKER_BUILD_STEP") != "1" {
		t.Skip("set ARBITER_DOCKER_BUILD_STEP=1 to run the Dockerfile's go build step")
	}
	p := parseDockerfile(t)
	var buildCmd string
	for _, r := range commands[*instructions.RunCommand](p.stages[0]) {
		if line := strings.Join(r.CmdLine, " "); strings.Contains(line, "go build") {
			buildCmd = line
		}
	}
	if buildCmd == "" {
		t.Fatal("no go build RUN in the builder stage")
	}
	ctxDir := t.TempDir()
	for _, f := range buildContext(t) {
		dst := filepath.Join(ctxDir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, readFile(t, filepath.Join(repoRoot, f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "arbiter")
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(buildCmd, "/out/arbiter", out))
	cmd.Dir = ctxDir
	cmd.Env = append(os.Environ(), "TARGETOS=linux", "TARGETARCH="+runtime.GOARCH, "GOFLAGS=-mod=readonly", "GOWORK=off",
		"VERSION=0.0.0-docker-step", "REVISION=0123456789abcdef0123456789abcdef01234567")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", buildCmd, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Errorf("binary has an ELF interpreter: dynamically linked, will not run on distroless/static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary needs shared libraries %v", libs)
	}
	if f.Section(".symtab") != nil {
		t.Errorf("binary has a symbol table: -ldflags -s not applied")
	}
	version, err := exec.Command(out, "--version").Output()
	if want := "arbiter 0.0.0-docker-step (commit 0123456789abcdef0123456789abcdef01234567, "; err != nil || !strings.HasPrefix(string(version), want) {
		t.Errorf("--version = %q (%v), want it to start with %q: the -X stamp does not reach internal/buildinfo", version, err, want)
	}
	help, err := exec.Command(out, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("arbiter serve --help: %v\n%s", err, help)
	}
	for _, flag := range []string{"--listen", "--tools", "--drain-timeout"} {
		if !strings.Contains(string(help), flag) {
			t.Errorf("arbiter serve --help lacks %s", flag)
		}
	}
}
