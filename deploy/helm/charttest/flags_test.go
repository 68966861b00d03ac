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
// serveCmd struct of package main in cmd/arbiter (kong: the name tag, or the field
// name in kebab case; a negatable bool also as no-NAME). The fields of a struct
// embedded in serveCmd (proxyFlags, in serve_proxy.go) are serve's flags too, as kong
// reads them, so they are followed into whichever file of the package declares them.
func serveFlags(t testing.TB) (flags, envs map[string]bool) {
	t.Helper()
	dir := filepath.Join(repoRoot, "cmd", "arbiter")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]*ast.StructType{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	flags, envs = map[string]bool{}, map[string]bool{}
	var walk func(name string)
	walk = func(name string) {
		st := structs[name]
		if st == nil {
			t.Fatalf("%s: no struct %s in package main", dir, name)
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
			if len(fld.Names) == 0 { // embedded: kong adds its fields as they are
				id, ok := fld.Type.(*ast.Ident)
				if !ok {
					t.Fatalf("%s: embedded field %T in %s: only a struct of the package is followed", dir, fld.Type, name)
				}
				for _, k := range []string{"prefix", "envprefix", "embed"} {
					if _, set := tag.Lookup(k); set {
						t.Fatalf("%s: embedded %s in %s has a %s tag, which serveFlags does not apply", dir, id.Name, name, k)
					}
				}
				walk(id.Name)
				continue
			}
			for _, n := range fld.Names {
				flag := tag.Get("name")
				if flag == "" {
					flag = kebab(n.Name)
				}
				flags[flag] = true
				if _, neg := tag.Lookup("negatable"); neg {
					flags["no-"+flag] = true
				}
				if e := tag.Get("env"); e != "" {
					envs[e] = true
				}
			}
		}
	}
	walk("serveCmd")
	if len(flags) == 0 {
		t.Fatalf("%s: no serveCmd flags found", dir)
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

// TestServeFlagsSeeEmbeddedStructs: kong takes the fields of a struct embedded in
// serveCmd as serve's own flags (proxyFlags, in serve_proxy.go, holds the wire guard's),
// so serveFlags must read them, wherever in the package the struct is declared.
func TestServeFlagsSeeEmbeddedStructs(t *testing.T) {
	flags, envs := serveFlags(t)
	for _, f := range []string{"listen", "proxy-listen", "proxy-gemini-upstream", "proxy-add-transcription", "proxy-dial-timeout"} {
		if !flags[f] {
			t.Errorf("serveFlags lacks --%s", f)
		}
	}
	for _, e := range []string{"ARBITER_LISTEN", "ARBITER_PROXY_LISTEN", "ARBITER_PROXY_TLS_CERT"} {
		if !envs[e] {
			t.Errorf("serveFlags lacks %s", e)
		}
	}
}
