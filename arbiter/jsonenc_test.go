package arbiter

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestJSONLen: jsonLen is len(json.Marshal(v)), and AppendJSON json.Marshal's very
// bytes (they are stored and hashed), for JSON-shaped values: fixed tricky
// cases (escapes, HTML characters, invalid UTF-8, U+2028, float formats at the 'e'
// boundaries, nil maps and lists) and 20,000 random nested values from a fixed seed;
// and it declines (ok false) what json.Marshal refuses or what is not JSON-shaped.
func TestJSONEncoding(t *testing.T) {
	check := func(v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		n, ok := jsonLen(v)
		if !ok || n != len(b) {
			t.Fatalf("jsonLen(%#v) = %d, %v; json.Marshal is %d bytes: %s", v, n, ok, len(b), b)
		}
		a, ok := AppendJSON([]byte("prefix"), v)
		if !ok || string(a) != "prefix"+string(b) {
			t.Fatalf("AppendJSON(%#v) = %s, %v; json.Marshal: %s", v, a, ok, b)
		}
	}
	for _, v := range []any{
		nil, true, false, "", "plain", `quote " and \ backslash`, "\b\f\n\r\t\x00\x01\x1f\x7f",
		"<a href='x'>&amp;</a>", "caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff\xfe utf-8 \xe2\x82", string([]byte{0xed, 0xa0, 0x80}),
		0.0, math.Copysign(0, -1), 1.0, -1.5, 1e-6, 9.99999e-7, 1e-7, 1.5e-300, 1e20, 1e21, 123456789012345678901.0,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-10, 3.141592653589793, 1e100, 5e-324,
		map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{"slot": "tomorrow 3pm", "n": 2.0, "<k>": []any{nil, true, map[string]any{"\u2028": "x"}}},
	} {
		check(v)
	}
	many := map[string]any{}
	for i := range 20 {
		many[string(rune('t'-i))+"k"] = float64(i)
	}
	check(many)
	r := rand.New(rand.NewPCG(16, 16))
	for range 20000 {
		check(randomJSON(r, 4))
	}
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"x": math.Inf(-1)}, []any{1, 2}, map[string]any{"i": int64(3)}, struct{}{}} {
		if n, ok := jsonLen(v); ok {
			t.Errorf("jsonLen(%#v) = %d, true; want false", v, n)
		}
		if a, ok := AppendJSON([]byte("prefix"), v); ok || string(a) != "prefix" {
			t.Errorf("AppendJSON(%#v) = %q, %v; want prefix, false", v, a, ok)
		}
	}
	deep := any("leaf")
	for range jsonLenMaxDepth + 1 {
		deep = []any{deep}
	}
	if _, ok := AppendJSON(nil, deep); ok {
		t.Errorf("AppendJSON of %d levels: ok, want false", jsonLenMaxDepth+1)
	}
	if _, ok := jsonLen(deep); ok {
		t.Errorf("jsonLen of %d levels: ok, want false (left to json.Marshal)", jsonLenMaxDepth+1)
	}
}

// TestCanonicalJSONFastPath: canonicalJSON, which encodes a value jsonCanonical would
// not change as it is, gives what it gave before (json.Marshal of jsonCanonical's
// copy) for random values with -0, nil lists and maps, NaN, ±Inf, ints and
// json.Number among them.
func TestCanonicalJSONFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 16))
	odd := []any{math.Copysign(0, -1), []any(nil), map[string]any(nil), math.NaN(), math.Inf(1), math.Inf(-1), 7, int64(-3), json.Number("2.50"), float32(1.5)}
	for i := range 20000 {
		v := randomJSON(r, 3)
		if i%3 == 0 {
			v = map[string]any{"a": v, "odd": odd[r.IntN(len(odd))], "l": []any{odd[r.IntN(len(odd))], v}}
		}
		b, err := json.Marshal(jsonCanonical(v))
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if got := canonicalJSON(v); got != string(b) {
			t.Fatalf("canonicalJSON(%#v) = %s, want %s", v, got, b)
		}
	}
	for _, v := range odd {
		b, _ := json.Marshal(jsonCanonical(v))
		if got := canonicalJSON(v); got != string(b) {
			t.Fatalf("canonicalJSON(%#v) = %s, want %s", v, got, b)
		}
	}
}

// randomJSON is a random JSON-shaped value nested at most depth levels.
func randomJSON(r *rand.Rand, depth int) any {
	k := r.IntN(8)
	if depth == 0 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return randomString(r)
	case 3:
		for {
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	case 4:
		// numbers as JSON sends them: small integers and decimals, near the 'e' bounds
		switch r.IntN(3) {
		case 0:
			return float64(r.IntN(100000) - 50000)
		case 1:
			return r.Float64() * math.Pow(10, float64(r.IntN(50)-25))
		default:
			return -r.Float64() * 1e-6
		}
	case 5, 6:
		m := make(map[string]any, r.IntN(5))
		for range r.IntN(5) {
			m[randomString(r)] = randomJSON(r, depth-1)
		}
		return m
	default:
		l := make([]any, r.IntN(5))
		for i := range l {
			l[i] = randomJSON(r, depth-1)
		}
		return l
	}
}

// randomString mixes plain text, every escape class, multi-byte runes, U+2028 and
// invalid UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "slot", " ", "3pm", `"`, `\`, "\n", "\t", "\b", "\f", "\r", "\x00", "\x1f", "\x7f", "<", ">", "&",
		"é", "日本", "\U0001F600", "\u2028", "\u2029", "\xff", "\xe2\x82", "\xc0\xaf"}
	var b strings.Builder
	for range r.IntN(12) {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.IntN(256)))
		} else {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
	}
	return b.String()
}
