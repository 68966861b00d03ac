package arbiter

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// BusinessKey returns the deduplication key of a call: the tool name plus the
// policy's canonical arguments (a string as its KeyAs says, any other value as
// canonical JSON; with no key args, the whole args as canonical JSON), or, when
// explicit is not empty, the tool name plus explicit. lang is the session's language
// (BCP 47; empty: English): `as: datetime` arguments are read in it (Spanish, French
// and German through dates.go; any other as English). now is the reference time
// relative dates ("tomorrow 3pm", "mañana a las 3pm") resolve against, and its
// location the session's time zone, in which days are counted and a time said
// without an offset is read (zones.go): the engine passes the session's start in the
// session's zone (step.keyRef), so a re-issue across midnight keys as its original.
// The result is deterministic for the same inputs.
func BusinessKey(t *Tool, args map[string]any, explicit, lang string, now time.Time) string {
	if explicit != "" {
		return t.Name + "#" + explicit
	}
	if len(t.Key) == 0 {
		return t.Name + canonicalJSON(args) // a NaN no longer makes every such call one key
	}
	parts := make([]string, 0, len(t.Key))
	for _, k := range t.Key {
		parts = append(parts, k.Arg+"="+canonical(args[k.Arg], k.As, lang, now))
	}
	return t.Name + "(" + strings.Join(parts, ",") + ")"
}

// canonical is one key argument's part of the key, as its KeyAs says. A string is
// normalised as the KeyAs says (text, a minute, a number); any other value (a number
// under text or datetime, a bool, a list, an object) is its canonical JSON
// (canonicalJSON), whatever the KeyAs, except a number under `as: number`.
func canonical(v any, as KeyAs, lang string, now time.Time) string {
	if v == nil {
		return ""
	}
	switch as {
	case KeyExact:
		b, _ := json.Marshal(v)
		return string(b)
	case KeyNumber:
		switch n := v.(type) {
		case float64:
			return strconv.FormatFloat(n+0, 'g', -1, 64) // +0: -0 is 0
		case json.Number:
			if f, err := n.Float64(); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(speech.Normalize(n)), 64); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	case KeyDatetime:
		if s, ok := v.(string); ok {
			n := speech.Normalize(s)
			if k, ok := readISODate(n, now.Location()); ok {
				return k
			}
			if t, ok := parseDate(n, lang, now.Truncate(time.Minute)); ok {
				return t
			}
		}
	}
	if s, ok := v.(string); ok {
		return normText(s)
	}
	return canonicalJSON(v)
}

// canonicalJSON is the key of a value that is not a string (issue 13 follow-up: Go's
// %v printed a list as "[a b]" and an object as "map[...]", so a list of two words
// and one string of them shared a key, and an object's key depended on its printing):
// its JSON with object keys sorted (encoding/json's order), no insignificant space,
// and every number in one form, the shortest that reads back as the same float64
// (2, 2.0 and json.Number("2.0") are all 2, -0 is 0; 1e21 is 1e+21). A number JSON cannot
// carry (NaN, ±Inf) is written as the string "NaN", "+Inf" or "-Inf"; strings inside
// are kept as given (JSON-escaped). Deterministic; pure.
func canonicalJSON(v any) string {
	if isJSONCanonical(v, jsonLenMaxDepth) {
		// jsonCanonical would copy it unchanged: encode it as it is.
		if b, ok := AppendJSON(nil, v); ok {
			return string(b)
		}
	}
	c := jsonCanonical(v)
	if b, ok := AppendJSON(nil, c); ok {
		return string(b)
	}
	b, err := json.Marshal(c)
	if err != nil { // a Go value JSON cannot encode (a channel, a func): not from a call's args
		return fmt.Sprintf("%T", v)
	}
	return string(b)
}

// isJSONCanonical reports whether jsonCanonical(v) is v's equal (the args of a
// RegisterCall from the gRPC API always are): only nil, bools, strings, finite
// float64s other than -0, nil or non-nil maps and non-nil lists of them, at most depth
// levels deep.
func isJSONCanonical(v any, depth int) bool {
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0) && !(x == 0 && math.Signbit(x))
	case map[string]any:
		if depth <= 0 {
			return false
		}
		for _, e := range x {
			if !isJSONCanonical(e, depth-1) {
				return false
			}
		}
		return true
	case []any:
		if x == nil || depth <= 0 {
			return false // jsonCanonical makes a nil list an empty one
		}
		for _, e := range x {
			if !isJSONCanonical(e, depth-1) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonCanonical returns v with every number as a float64 (non-finite ones as strings)
// and maps and slices copied with their values made canonical; other values as they
// are.
func jsonCanonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x // null, as before
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonCanonical(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonCanonical(e)
		}
		return out
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return jsonCanonical(f)
		}
		return x.String()
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "+Inf"
		case math.IsInf(x, -1):
			return "-Inf"
		case x == 0:
			return 0.0 // -0 is 0
		}
		return x
	case float32:
		return jsonCanonical(float64(x))
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case uint:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return v
}

// dateMemo remembers parsed dates: the same wording in the same language at the same
// minute always gives the same key (the parse is a pure function of the three), and
// agents repeat their wordings ("tomorrow 3pm") call after call, while a parse costs
// tens of microseconds. Languages without a date table share the English entries.
// Bounded: cleared when full. Safe for concurrent use.
var dateMemo = struct {
	sync.Mutex
	m map[dateKey]dateVal
}{m: map[dateKey]dateVal{}}

type dateKey struct {
	lang string // dateLanguage's: "en", "es", "fr", "de"
	text string
	at   time.Time
	zone string // at's location's name: a Location pointer alone may be a new one
}

type dateVal struct {
	key string
	ok  bool
}

const dateMemoSize = 4096

// parseDate resolves text, in the session language lang, against at (a whole minute,
// in the session's time zone) to a minute, "2006-01-02T15:04" in UTC (instantKey), or a
// day in at's zone, "2006-01-02", when the text names no time of day (readEnglishDate, dateparse.go: every word accounted for, the current
// time of day never filled in); ok is false for a text that is not one date (a text
// key). English is parsed as written; Spanish, French and German are put into English
// first (translateDate). A zero at is no reference: ok is false.
func parseDate(text, lang string, at time.Time) (string, bool) {
	if at.IsZero() {
		return "", false // when's Context.Time would read the clock
	}
	table, l := dateLanguage(lang)
	k := dateKey{l, text, at, at.Location().String()}
	dateMemo.Lock()
	v, hit := dateMemo.m[k]
	dateMemo.Unlock()
	if hit {
		return v.key, v.ok
	}
	in := text
	if table != nil {
		in = translateDate(table, text)
	}
	if key, ok := readEnglishDate(in, at); ok {
		v = dateVal{key, true}
	}
	dateMemo.Lock()
	if len(dateMemo.m) >= dateMemoSize {
		clear(dateMemo.m)
	}
	dateMemo.m[k] = v
	dateMemo.Unlock()
	return v.key, v.ok
}

// normText is the text key of a string: speech.Normalize (format characters such as a
// zero-width space dropped, Unicode NFKC: a no-break space is a space, fullwidth
// digits are ASCII), then lower case with white space trimmed and collapsed.
func normText(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(speech.Normalize(s))), " ")
}
