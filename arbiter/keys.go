package arbiter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olebedev/when"
	"github.com/olebedev/when/rules/common"
	"github.com/olebedev/when/rules/en"

	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// dates is the natural-language date parser behind `as: datetime`
// (github.com/olebedev/when, English and common rules). A *when.Parser is safe for
// concurrent use once built: Parse does not modify it.
var dates = func() *when.Parser {
	w := when.New(nil)
	w.Add(en.All...)
	w.Add(common.All...)
	return w
}()

// BusinessKey returns the deduplication key of a call: the tool name plus the
// policy's canonical arguments, or, when explicit is not empty, the tool name plus
// explicit. lang is the session's language (BCP 47; empty: English): `as: datetime`
// arguments are read in it (Spanish, French and German through dates.go; any other
// as English). now is the call's time: relative dates ("tomorrow 3pm", "mañana a las
// 3pm") resolve against it, in UTC. The result is deterministic for the same inputs.
func BusinessKey(t *Tool, args map[string]any, explicit, lang string, now time.Time) string {
	if explicit != "" {
		return t.Name + "#" + explicit
	}
	if len(t.Key) == 0 {
		b, _ := json.Marshal(args) // map keys are sorted by encoding/json
		return t.Name + string(b)
	}
	parts := make([]string, 0, len(t.Key))
	for _, k := range t.Key {
		parts = append(parts, k.Arg+"="+canonical(args[k.Arg], k.As, lang, now))
	}
	return t.Name + "(" + strings.Join(parts, ",") + ")"
}

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
			return strconv.FormatFloat(n, 'g', -1, 64)
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(speech.Normalize(n)), 64); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	case KeyDatetime:
		if s, ok := v.(string); ok {
			if t, ok := parseDate(speech.Normalize(s), lang, now.UTC().Truncate(time.Minute)); ok {
				return t
			}
		}
	}
	return normText(v)
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
}

type dateVal struct {
	key string
	ok  bool
}

const dateMemoSize = 4096

// parseDate resolves text, in the session language lang, against at (a whole minute,
// UTC) to "2006-01-02T15:04". English is parsed as written; Spanish, French and German
// are put into English first (translateDate).
func parseDate(text, lang string, at time.Time) (string, bool) {
	table, l := dateLanguage(lang)
	k := dateKey{l, text, at}
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
	if r, err := dates.Parse(in, at); err == nil && r != nil {
		v = dateVal{r.Time.UTC().Format("2006-01-02T15:04"), true}
	}
	dateMemo.Lock()
	if len(dateMemo.m) >= dateMemoSize {
		clear(dateMemo.m)
	}
	dateMemo.m[k] = v
	dateMemo.Unlock()
	return v.key, v.ok
}

// normText is the text key of a value: speech.Normalize (format characters such as a
// zero-width space dropped, Unicode NFKC: a no-break space is a space, fullwidth
// digits are ASCII), then lower case with white space trimmed and collapsed.
func normText(v any) string {
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	return strings.Join(strings.Fields(strings.ToLower(speech.Normalize(s))), " ")
}
