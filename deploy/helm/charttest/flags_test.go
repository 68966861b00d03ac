package charttest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// serveFlags reads `arbiter serve`'s flags and environment variables from the
// serveCmd struct in cmd/arbiter/serve.go (kong: the name tag, or the field name in
// kebab case).
func serveFlags(t testing.TB) (flags, envs map[string]bool) {
	t.Helper()
	path := filepath.Join(repoRoot, "cmd", "arbiter", "serve.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	flags, envs = map[string]bool{}, map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "serveCmd" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			t.Fatalf("serveCmd is not a struct")
		}
		for _, fld := range st.Fields.List {
			var tag reflect.StructTag
			if fld.Tag != nil {
				s, err := strconv.Unquote(fld.Tag.Value)
				if err != nil {
					t.Fatal(err)
				}
				tag = reflect.StructTag(s)
			}
			for _, name := range fld.Names {
				flag := tag.Get("name")
				if flag == "" {
					flag = kebab(name.Name)
				}
				flags[flag] = true
				if e := tag.Get("env"); e != "" {
					envs[e] = true
				}
			}
		}
		return false
	})
	if len(flags) == 0 {
		t.Fatalf("%s: no serveCmd flags found", path)
	}
	return flags, envs
}

// kebab is kong's flag name for a field: IdleTTL -> idle-ttl, LogLevel -> log-level.
func kebab(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1]))) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

func TestKebab(t *testing.T) {
	for in, want := range map[string]string{"Listen": "listen", "IdleTTL": "idle-ttl", "LogLevel": "log-level", "RPCTimeout": "rpc-timeout"} {
		if got := kebab(in); got != want {
			t.Errorf("kebab(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChartFlagsExist: every flag and ARBITER_* variable the chart passes exists in
// `arbiter serve` (an unknown flag would crash-loop every pod), for the default and
// the production values.
func TestChartFlagsExist(t *testing.T) {
	flags, envs := serveFlags(t)
	for name, vals := range map[string]map[string]any{
		"default":     nil,
		"production":  values(t, []string{productionFile}),
		"persistence": values(t, nil, "persistence.enabled=true"),
	} {
		d := workload(t, mustRender(t, vals))
		c := container(t, d)
		for _, a := range c.Args {
			flag, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !strings.HasPrefix(a, "--") || !flags[flag] {
				t.Errorf("%s: arg %q is not an `arbiter serve` flag (known: %v)", name, a, flags)
			}
		}
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "ARBITER_") && !envs[e.Name] {
				t.Errorf("%s: env %s is not an `arbiter serve` variable", name, e.Name)
			}
		}
	}
}
