// Package realtime holds what the project knows about the realtime model servers' wire
// protocols, in one place: package gemini reads and writes Gemini Live
// BidiGenerateContent messages, package openai OpenAI Realtime events (GA and beta
// names). The wire guard (package guard) parses and builds with them, and so do the
// fake provider's translators and checker (package fakeprovider). This package holds
// the JSON helpers both use.
//
// Parsing is lenient in what a peer may send (a field absent, null or of another type
// reads as absent; Gemini's protobuf JSON is read in camelCase and snake_case) and
// strict in what it reports: an error only for a frame that is not a JSON object.
package realtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
)

// Obj is a JSON object as decoded with numbers kept as json.Number (so a payload
// forwarded or recorded keeps its digits).
type Obj = map[string]any

// ErrNotObject is returned for a frame that is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// DecodeObject parses b as one JSON object, numbers as json.Number. Errors:
// ErrNotObject (wrapped with the decoder's reason).
func DecodeObject(b []byte) (Obj, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m Obj
	if err := d.Decode(&m); err != nil {
		return nil, errors.Join(ErrNotObject, err)
	}
	if m == nil {
		return nil, ErrNotObject
	}
	return m, nil
}

// Field returns m's field named camel, or its snake_case spelling (protobuf JSON
// takes both: "functionResponses", "function_responses"); ok is false when neither
// is present.
func Field(m Obj, camel string) (any, bool) {
	if m == nil {
		return nil, false
	}
	if v, ok := m[camel]; ok {
		return v, true
	}
	v, ok := m[Snake(camel)]
	return v, ok
}

// ObjField is Field for an object value; nil when absent or not an object.
func ObjField(m Obj, camel string) Obj {
	v, _ := Field(m, camel)
	o, _ := v.(Obj)
	return o
}

// StrField is Field for a string value; "" when absent or not a string.
func StrField(m Obj, camel string) string {
	v, _ := Field(m, camel)
	s, _ := v.(string)
	return s
}

// BoolField is Field for a boolean value; false when absent or not a boolean.
func BoolField(m Obj, camel string) bool {
	v, _ := Field(m, camel)
	b, _ := v.(bool)
	return b
}

// ListField is Field for an array value; nil when absent or not an array.
func ListField(m Obj, camel string) []any {
	v, _ := Field(m, camel)
	l, _ := v.([]any)
	return l
}

// Snake spells a lowerCamel name in snake_case.
func Snake(camel string) string {
	var b strings.Builder
	for _, r := range camel {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ScanKeys calls fn with each object key of the raw JSON b (a string followed by a
// colon), in order, without decoding: one pass from quote to quote (a long string,
// base64 audio, is skipped in one search). It stops when fn returns false. On bytes
// that are not JSON it reads what it can.
func ScanKeys(b []byte, fn func(key []byte) bool) {
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return
		}
		start := i + q + 1
		end := start
		for {
			j := bytes.IndexByte(b[end:], '"')
			if j < 0 {
				return
			}
			end += j
			bs := 0
			for k := end - 1; k >= start && b[k] == '\\'; k-- {
				bs++
			}
			if bs%2 == 0 {
				break
			}
			end++
		}
		i = end + 1
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
		if i < len(b) && b[i] == ':' && !fn(b[start:end]) {
			return
		}
	}
}

// Plain turns a decoded JSON value into plain Go values for the engine: json.Number
// into float64 (an integer too large for a float64 keeps its text), objects and
// arrays recursively. Obj values come back as map[string]any.
func Plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	}
	return v
}

// PlainObj is Plain for an object (nil stays nil).
func PlainObj(m Obj) map[string]any {
	if m == nil {
		return nil
	}
	return Plain(m).(map[string]any)
}

// Marshal encodes v as JSON without escaping HTML characters (the providers do not,
// and a payload forwarded should keep its bytes readable).
func Marshal(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
