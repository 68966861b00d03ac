package fakeprovider

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode"
)

// obj is a JSON object as the translators build and read them.
type obj = map[string]any

// decodeObject parses a client message; ok is false when it is not a JSON object.
// Numbers stay json.Number, so a recorded payload keeps its digits.
func decodeObject(b []byte) (obj, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m obj
	if d.Decode(&m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// field returns m's field named camel, or its snake_case spelling: the Gemini API
// takes protobuf JSON, where both are valid ("functionResponses",
// "function_responses"). ok is false when neither is present.
func field(m obj, camel string) (any, bool) {
	if m == nil {
		return nil, false
	}
	if v, ok := m[camel]; ok {
		return v, true
	}
	v, ok := m[snake(camel)]
	return v, ok
}

// objField is field for an object value; nil when absent or not an object.
func objField(m obj, camel string) obj {
	v, _ := field(m, camel)
	o, _ := v.(obj)
	return o
}

// strField is field for a string value; "" when absent or not a string.
func strField(m obj, camel string) string {
	v, _ := field(m, camel)
	s, _ := v.(string)
	return s
}

// boolField is field for a boolean value; false when absent or not a boolean.
func boolField(m obj, camel string) bool {
	v, _ := field(m, camel)
	b, _ := v.(bool)
	return b
}

// listField is field for an array value; nil when absent or not an array.
func listField(m obj, camel string) []any {
	v, _ := field(m, camel)
	l, _ := v.([]any)
	return l
}

// snake spells a lowerCamel name in snake_case.
func snake(camel string) string {
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

// silence20ms is 20 ms of silent 16-bit mono PCM at 24 kHz (both providers' output
// format), base64: the audio chunk model_audio_start sends.
var silence20ms = base64.StdEncoding.EncodeToString(make([]byte, 24000/50*2))

// argsJSON is a tool call's arguments as the JSON text OpenAI sends ("{}" for none).
func argsJSON(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}
