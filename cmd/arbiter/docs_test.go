package main

// Docs that cannot drift (issue 22): every fenced code block of README.md and docs/*.md
// is run or checked here, or is cut from a file the tests run (clients/e2e/snippets.py,
// run by clients/test.sh), or says it is illustrative in its first line (a comment
// starting "illustrative", which a reader sees). A block is claimed by the HTML comment
// right before it (blank lines aside):
//
//	<!-- check: NAME -->      checked by docChecks[NAME] below
//	<!-- snippet: FILE -->    cut from FILE (clients/e2e/snippets.py)
//
// and the relative links of the Markdown files (README.md, docs/, the client and chart
// READMEs) must name files that exist and headings that exist in them.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voicearbiter/arbiter/policyfile"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// docBlock is one fenced code block of a Markdown file.
type docBlock struct {
	File   string // relative to the repository root
	Line   int    // of the opening fence, from 1
	Info   string // the fence's info string ("sh", "yaml", "mermaid", "")
	Marker string // "check: NAME", "snippet: FILE" or ""
	Lines  []string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }
func (b docBlock) Text() string   { return strings.Join(b.Lines, "\n") + "\n" }

// check is the NAME of a "check: NAME" marker, or "".
func (b docBlock) check() string {
	name, ok := strings.CutPrefix(b.Marker, "check: ")
	if !ok {
		return ""
	}
	return name
}

// illustrative says whether the block's first line says so, as a comment a reader sees.
func (b docBlock) illustrative() bool {
	if len(b.Lines) == 0 {
		return false
	}
	first := strings.TrimSpace(b.Lines[0])
	for _, c := range []string{"#", "//", "%%"} {
		if rest, ok := strings.CutPrefix(first, c); ok && strings.HasPrefix(strings.TrimSpace(rest), "illustrative") {
			return true
		}
	}
	return false
}

var (
	markerRE = regexp.MustCompile(`^\s*<!--\s*((?:check|snippet):\s*\S+)\s*-->\s*$`)
	fenceRE  = regexp.MustCompile("^\\s*```(.*)$")
)

// docBlocks reads the fenced code blocks of file (relative to the repository root).
func docBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []docBlock
	marker := ""
	for i := 0; i < len(lines); i++ {
		if m := markerRE.FindStringSubmatch(lines[i]); m != nil {
			marker = strings.Join(strings.Fields(m[1]), " ")
			continue
		}
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.TrimSpace(lines[i]) != "" {
				marker = "" // a marker names the block right after it
			}
			continue
		}
		b := docBlock{File: file, Line: i + 1, Info: strings.TrimSpace(m[1]), Marker: marker}
		for i++; i < len(lines) && !fenceRE.MatchString(lines[i]); i++ {
			b.Lines = append(b.Lines, lines[i])
		}
		out = append(out, b)
		marker = ""
	}
	return out
}

// docFiles are the pages whose blocks must be accounted for.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, repoRoot+string(filepath.Separator))))
	}
	return files
}

// TestDocsBlocksAccountedFor: every code block of README.md and docs/*.md is checked,
// cut from a tested file, or visibly illustrative; every check names a known one.
func TestDocsBlocksAccountedFor(t *testing.T) {
	used := map[string]int{}
	for _, f := range docFiles(t) {
		for _, b := range docBlocks(t, f) {
			switch name := b.check(); {
			case name != "":
				if _, ok := docChecks[name]; !ok {
					t.Errorf("%s: unknown check %q (docs_test.go docChecks)", b, name)
				}
				used[name]++
			case strings.HasPrefix(b.Marker, "snippet: "):
			case b.illustrative():
			default:
				t.Errorf("%s: a %q block that nothing checks: mark it <!-- check: NAME --> (docs_test.go), <!-- snippet: FILE --> (cut from a tested file), or start it with a comment saying it is illustrative", b, b.Info)
			}
		}
	}
	for name := range docChecks {
		if used[name] == 0 {
			t.Errorf("check %q checks no block", name)
		}
	}
}

// TestDocsChecks runs the check of every block that names one.
func TestDocsChecks(t *testing.T) {
	for _, f := range docFiles(t) {
		blocks := docBlocks(t, f)
		for i, b := range blocks {
			name := b.check()
			if name == "" || docChecks[name] == nil {
				continue
			}
			var next *docBlock
			if i+1 < len(blocks) {
				next = &blocks[i+1]
			}
			t.Run(fmt.Sprintf("%s:%d:%s", strings.ReplaceAll(f, "/", "_"), b.Line, name), func(t *testing.T) {
				docChecks[name](t, b, next)
			})
		}
	}
}

// docChecks check one block each (next: the block after it in its file, or nil).
var docChecks = map[string]func(t *testing.T, b docBlock, next *docBlock){
	"first-lines": checkFirstLines,
	"install":     checkInstall,
	"replay":      checkReplay,
	"output":      func(*testing.T, docBlock, *docBlock) {}, // compared by the block before it
	"replay-html": checkReplayHTML,
	"shell":       checkShell,
	"sequence":    checkSequence,
	"policy":      checkPolicy,
	"layout":      checkLayout,
	"flags":       checkFlags,
}

// checkFirstLines: the README opens with the service run with no flags (its comment's
// address is serve's default --listen) and the test command CI runs (.ci/run).
func checkFirstLines(t *testing.T, b docBlock, _ *docBlock) {
	if b.File != "README.md" || b.Line > 5 {
		t.Errorf("%s: the first-lines block must open README.md", b)
	}
	var cmds []string
	for _, l := range b.Lines {
		if cmd, _, _ := strings.Cut(l, "#"); strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/arbiter serve" {
		t.Fatalf("%s: want two commands, `go run ./cmd/arbiter serve` (no flags) and the test script; got %q", b, cmds)
	}
	_, help, _ := runCLI(t, "serve", "--help")
	if !strings.Contains(b.Lines[0], "127.0.0.1:50051") || !strings.Contains(help, `--listen="127.0.0.1:50051"`) {
		t.Errorf("%s: the comment or serve's default --listen is not 127.0.0.1:50051:\n%s", b, help)
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^exec ` + regexp.QuoteMeta(cmds[1]) + `$`).Match(ci) {
		t.Errorf("%s: .ci/run does not run %q:\n%s", b, cmds[1], ci)
	}
}

// checkInstall runs the block in the checkout (scripts/build.sh writes bin/, which git
// ignores): it must succeed and --version name the checkout's commit.
func checkInstall(t *testing.T, b docBlock, _ *docBlock) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	out := runBlock(t, b, repoRoot, nil, nil)
	if want := "(commit " + strings.TrimSpace(string(head)); !strings.Contains(out, want) {
		t.Errorf("%s: the output does not contain %q:\n%s", b, want, out)
	}
}

// cliArgs splits one `arbiter ...` command line of a block into the arguments after
// "arbiter", with paths into testdata/ made relative to this package.
func cliArgs(t *testing.T, b docBlock) []string {
	t.Helper()
	var cmd string
	for _, l := range b.Lines {
		if c, _, _ := strings.Cut(l, "#"); strings.TrimSpace(c) != "" {
			if cmd != "" {
				t.Fatalf("%s: want one command, got another: %q", b, l)
			}
			cmd = strings.TrimSpace(c)
		}
	}
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "arbiter" {
		t.Fatalf("%s: want an `arbiter ...` command, got %q", b, cmd)
	}
	args := f[1:]
	for i, a := range args {
		if strings.HasPrefix(a, "testdata/") {
			args[i] = filepath.Join(repoRoot, a)
		}
	}
	return args
}

// checkReplay runs the block's replay in process and compares its stdout with the
// output block after it, line for line.
func checkReplay(t *testing.T, b docBlock, next *docBlock) {
	if next == nil || next.check() != "output" {
		t.Fatalf("%s: a replay block is followed by its output (<!-- check: output -->)", b)
	}
	code, out, errOut := runCLI(t, cliArgs(t, b)...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", b, code, errOut)
	}
	if shown := next.Text(); shown != out {
		t.Errorf("%s shows\n%s\nthe replay prints\n%s", next, shown, out)
	}
}

// checkReplayHTML runs the block's replay --html in process, the page written to a
// temporary folder: it must draw the trace's calls.
func checkReplayHTML(t *testing.T, b docBlock, _ *docBlock) {
	args := cliArgs(t, b)
	page := ""
	for i, a := range args {
		if a == "--html" && i+1 < len(args) {
			page = filepath.Join(t.TempDir(), filepath.Base(args[i+1]))
			args[i+1] = page
		}
	}
	if page == "" {
		t.Fatalf("%s: no --html FILE", b)
	}
	if code, _, errOut := runCLI(t, args...); code != 0 {
		t.Fatalf("%s: exit %d\n%s", b, code, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "fc_1792165045038015411", "Actually, stop."} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("%s: the page lacks %q", b, want)
		}
	}
}

var (
	builtOnce sync.Once
	builtDir  string
	builtErr  error
)

// builtArbiter builds ./cmd/arbiter once per test binary; the folder holding it goes
// first on the PATH of the blocks run.
func builtArbiter(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		builtDir, builtErr = os.MkdirTemp("", "arbiter-docs-")
		if builtErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(builtDir, "arbiter"), "./cmd/arbiter")
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtDir
}

// freePort is a TCP port on 127.0.0.1 nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The ports the docs name, each replaced by a free one when a block runs, so a block
// never meets a server of the developer's (or of another test).
var docPorts = []string{"50051", "50052", "6380"}

// runBlock runs the block's text with bash (-e, pipefail) in dir, with the built
// arbiter first on the PATH, the ports the docs name replaced by free ones (env also
// gets ARBITER_LISTEN, serve's default address, on the first, and ARBITER_LOG_LEVEL=warn
// so that servers' info lines do not mix into the output), and marks before each
// annotation line (`#   -> ...`): annotations[i] gets the output of the commands between
// annotation i-1 and i. The process group is killed at the end (servers started with
// &). Returns the whole output; fails the test on a non-zero exit.
func runBlock(t *testing.T, b docBlock, dir string, env []string, annotations *[]annotation) string {
	t.Helper()
	text := b.Text()
	ports := map[string]string{}
	for _, p := range docPorts {
		if strings.Contains(text, p) {
			ports[p] = strconv.Itoa(freePort(t))
			text = strings.ReplaceAll(text, p, ports[p])
		}
	}
	listen := ports["50051"]
	if listen == "" {
		listen = strconv.Itoa(freePort(t))
	}
	var script strings.Builder
	script.WriteString("set -eo pipefail\n")
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if a, ok := strings.CutPrefix(strings.TrimSpace(l), "#   -> "); ok {
			fmt.Fprintf(&script, "echo '@@annotation %d'\n", n)
			if annotations != nil {
				*annotations = append(*annotations, annotation{text: a})
			}
			n++
			continue
		}
		script.WriteString(l + "\n")
	}
	fmt.Fprintf(&script, "echo '@@annotation %d'\n", n)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+builtArbiter(t)+string(os.PathListSeparator)+os.Getenv("PATH"), "ARBITER_LISTEN=127.0.0.1:"+listen, "ARBITER_LOG_LEVEL=warn"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// One pipe for both streams, so the output keeps its order (a file would not: `tee
	// /dev/stderr` opens it again at offset 0). A server the block left running holds
	// the pipe: Wait gives up on it after WaitDelay, and the group is killed.
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the block left running
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil
		}
	}
	out := buf.String()
	if err != nil {
		t.Fatalf("%s: %v (ports %v)\n%s", b, err, ports, out)
	}
	if annotations != nil {
		parts := regexp.MustCompile(`(?m)^@@annotation (\d+)\n`).Split(out, -1)
		for i := range *annotations {
			if i < len(parts) {
				(*annotations)[i].output = parts[i]
			}
		}
	}
	return out
}

// annotation is a `#   -> ...` line of a block and the output of the commands above it.
type annotation struct{ text, output string }

var (
	quotedRE = regexp.MustCompile("\"([^\"]+)\"|`([^`]+)`")
	enumRE   = regexp.MustCompile(`\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b`)
)

// claims are what an annotation asserts about the output above it: every "quoted"
// string (EPOCH stands for a session epoch, <...> for any text, a leading or trailing …
// for more text), every `backquoted` one (as it is), and every UPPER_SNAKE_CASE name
// must be in it.
func (a annotation) claims() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, m := range quotedRE.FindAllStringSubmatch(a.text, -1) {
		if m[2] != "" {
			out = append(out, regexp.MustCompile(regexp.QuoteMeta(m[2])))
			continue
		}
		q := regexp.QuoteMeta(strings.Trim(m[1], "…"))
		q = strings.ReplaceAll(q, "EPOCH", `[0-9a-z]+`)
		q = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(q, `.+?`)
		out = append(out, regexp.MustCompile(q))
	}
	for _, e := range enumRE.FindAllString(quotedRE.ReplaceAllString(a.text, ""), -1) {
		out = append(out, regexp.MustCompile(`\b`+e+`\b`))
	}
	return out
}

// checkShell runs the block with bash in a scratch folder that holds the checkout's
// testdata/ (what the block writes stays there), and checks each annotation's claims
// against the output of the commands above it. A block that calls grpcurl needs it on
// the PATH (scripts/test.sh installs it); without it the check is skipped, unless
// ARBITER_DOCS_ALL=1 says every block must run.
func checkShell(t *testing.T, b docBlock, _ *docBlock) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	for _, tool := range []string{"grpcurl", "redis-server", "redis-cli"} {
		if !strings.Contains(b.Text(), tool+" ") {
			continue
		}
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("ARBITER_DOCS_ALL") == "1" {
				t.Fatalf("%s needs %s on the PATH (ARBITER_DOCS_ALL=1)", b, tool)
			}
			t.Skipf("%s needs %s on the PATH (scripts/test.sh installs it)", b, tool)
		}
	}
	dir := t.TempDir()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	var annotations []annotation
	out := runBlock(t, b, dir, nil, &annotations)
	for _, a := range annotations {
		for _, c := range a.claims() {
			if !c.MatchString(a.output) {
				t.Errorf("%s: the annotation %q: %s is not in the output above it:\n%s", b, a.text, c, a.output)
			}
		}
	}
	if t.Failed() {
		t.Logf("the whole output:\n%s", out)
	}
}

// checkSequence: every request the diagram sends to the arbiter is an RPC of
// ArbiterService.
func checkSequence(t *testing.T, b docBlock, _ *docBlock) {
	rpcs := map[string]bool{}
	for _, m := range arbiterv1.ArbiterService_ServiceDesc.Methods {
		rpcs[m.MethodName] = true
	}
	for _, s := range arbiterv1.ArbiterService_ServiceDesc.Streams {
		rpcs[s.StreamName] = true
	}
	arrow := regexp.MustCompile(`->>\s*R\s*:\s*(.*)$`)
	n := 0
	for _, l := range b.Lines {
		m := arrow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		calls := regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(m[1], "") // the arguments
		for _, call := range strings.Split(calls, ",") {
			name := strings.TrimSpace(call)
			if i := strings.IndexAny(name, "( "); i >= 0 {
				name = name[:i]
			}
			n++
			if !rpcs[name] {
				t.Errorf("%s: %q is not an RPC of arbiter.v1.ArbiterService", b, name)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no request to R (the arbiter)", b)
	}
}

// checkPolicy: the block is a tool policy the loader accepts.
func checkPolicy(t *testing.T, b docBlock, _ *docBlock) {
	if _, err := policyfile.Parse([]byte(b.Text()), b.String()); err != nil {
		t.Errorf("%s: %v", b, err)
	}
}

// checkLayout: each path the layout names exists: a top-level entry from the root, an
// indented file name (name.go) in the folder of the entry above it.
func checkLayout(t *testing.T, b docBlock, _ *docBlock) {
	dir := ""
	goFile := regexp.MustCompile(`\b([a-z_]+\.go)\b`)
	for _, l := range b.Lines {
		if l == "" {
			continue
		}
		if l[0] != ' ' {
			path := strings.Fields(l)[0]
			if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
				t.Errorf("%s: %q does not exist", b, path)
			}
			dir = path
			continue
		}
		for _, m := range goFile.FindAllStringSubmatch(l, -1) {
			if _, err := os.Stat(filepath.Join(repoRoot, dir, m[1])); err != nil {
				t.Errorf("%s: %s has no %s", b, dir, m[1])
			}
		}
	}
}

// checkFlags: every --flag of each `arbiter SUBCOMMAND...` line is one that
// subcommand's --help lists.
func checkFlags(t *testing.T, b docBlock, _ *docBlock) {
	flagRE := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	joined := strings.ReplaceAll(b.Text(), "\\\n", " ")
	n := 0
	for _, l := range strings.Split(joined, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "arbiter" {
			continue
		}
		var sub []string
		for _, w := range f[1:] {
			if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "[(:/.") || strings.ToUpper(w) == w {
				break
			}
			sub = append(sub, w)
		}
		_, help, _ := runCLI(t, append(sub, "--help")...)
		for _, fl := range flagRE.FindAllString(l, -1) {
			n++
			if !regexp.MustCompile(`(?m)^\s+(-\w, )?` + regexp.QuoteMeta(fl) + `\b`).MatchString(help) {
				t.Errorf("%s: arbiter %s has no flag %s", b, strings.Join(sub, " "), fl)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s: no `arbiter ...` line with a flag", b)
	}
}

// linkFiles are the Markdown files whose links are checked.
func linkFiles(t *testing.T) []string {
	return append(docFiles(t), "clients/README.md", "clients/node/README.md", "clients/python/README.md", "deploy/helm/arbiter/README.md", "CHANGELOG.md")
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown file:
// lowercased, punctuation but - and _ dropped, spaces made -, a repeat suffixed -1, -2.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	drop := regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if fenceRE.MatchString(l) {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocsLinks: every relative link of the Markdown files names a file or folder that
// exists, and an anchor one of its headings.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	for _, file := range linkFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		text := code.ReplaceAllString(string(data), "")
		var bad []string
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			full := filepath.Join(repoRoot, file)
			if path != "" {
				full = filepath.Join(repoRoot, filepath.Dir(file), path)
			}
			if _, err := os.Stat(full); err != nil {
				bad = append(bad, target+": no such file")
				continue
			}
			if anchor != "" && strings.HasSuffix(full, ".md") && !headingAnchors(t, full)[anchor] {
				bad = append(bad, target+": no such heading")
			}
		}
		sort.Strings(bad)
		for _, b := range bad {
			t.Errorf("%s: link %s", file, b)
		}
	}
}
