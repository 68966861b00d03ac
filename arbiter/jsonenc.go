package arbiter

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// jsonLenMaxDepth bounds jsonLen's descent: deeper values (the limits allow 16
// levels; a cyclic map has no bottom) are left to encoding/json.
const jsonLenMaxDepth = 64

// jsonLen returns the length in bytes of encoding/json's encoding of v (json.Marshal,
// HTML-escaped as it is by default) without encoding it, for a JSON-shaped value: nil,
// bool, string, finite float64, map[string]any and []any, nested at most
// jsonLenMaxDepth levels. ok is false for anything else (another type, NaN or ±Inf,
// deeper nesting): the caller then asks json.Marshal, which also says why it fails.
// It allocates nothing, so checkSize no longer encodes every call's args (twice per
// RegisterCall) only to count them.
func jsonLen(v any) (n int, ok bool) { return jsonLenDepth(v, jsonLenMaxDepth) }

func jsonLenDepth(v any, depth int) (int, bool) {
	switch v := v.(type) {
	case nil:
		return 4, true // null
	case bool:
		if v {
			return 4, true
		}
		return 5, true
	case string:
		return jsonStringLen(v), true
	case float64:
		return jsonFloatLen(v)
	case map[string]any:
		if v == nil {
			return 4, true
		}
		if depth <= 0 {
			return 0, false
		}
		n := 2 + max(len(v)-1, 0) // {}, commas
		for k, e := range v {
			en, ok := jsonLenDepth(e, depth-1)
			if !ok {
				return 0, false
			}
			n += jsonStringLen(k) + 1 + en // "key":value
		}
		return n, true
	case []any:
		if v == nil {
			return 4, true
		}
		if depth <= 0 {
			return 0, false
		}
		n := 2 + max(len(v)-1, 0)
		for _, e := range v {
			en, ok := jsonLenDepth(e, depth-1)
			if !ok {
				return 0, false
			}
			n += en
		}
		return n, true
	}
	return 0, false
}

// jsonStringLen is the length of s as encoding/json writes it (appendString with
// HTML escaping): quoted; \\ \" \b \f \n \r \t as two bytes; other control bytes and
// < > & as \u00XX; invalid UTF-8 bytes as \ufffd each; U+2028 and U+2029 as \u202X.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			n += 6
		case c == '\u2028' || c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// jsonFloatLen is the length of f as encoding/json writes a float64 (floatEncoder):
// 'f' format, 'e' below 1e-6 or from 1e21 on with a one-digit negative exponent
// written without its 0 (1e-07 as 1e-7); false for NaN and ±Inf, which it refuses.
func jsonFloatLen(f float64) (int, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	var buf [32]byte
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	n := len(b)
	if format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		n--
	}
	return n, true
}

// AppendJSON appends encoding/json's encoding of v (json.Marshal's bytes exactly:
// map keys sorted, HTML-escaped strings, its float formats) to dst, for a JSON-shaped
// value as jsonLen takes them, without reflection; ok is false, and dst returned as it
// was, for anything else, which the caller encodes with json.Marshal. The session
// codec and the args digest use it: their bytes are stored and compared, so it must
// never differ from json.Marshal (TestAppendJSON). Safe for concurrent use.
func AppendJSON(dst []byte, v any) ([]byte, bool) {
	out, ok := appendJSON(dst, v, jsonLenMaxDepth)
	if !ok {
		return dst, false
	}
	return out, true
}

func appendJSON(dst []byte, v any, depth int) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		if v {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case string:
		return appendJSONString(dst, v), true
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return dst, false
		}
		format := byte('f')
		if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			format = 'e'
		}
		dst = strconv.AppendFloat(dst, v, format, -1, 64)
		if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
		return dst, true
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		if depth <= 0 {
			return dst, false
		}
		var small [8]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // json.Marshal's order: strings.Compare of the keys
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendJSON(dst, v[k], depth-1); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		if depth <= 0 {
			return dst, false
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendJSON(dst, e, depth-1); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

const jsonHex = "0123456789abcdef"

// appendJSONString appends s as encoding/json writes it (see jsonStringLen).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '\\' && b != '"' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', jsonHex[b>>4], jsonHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', jsonHex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
