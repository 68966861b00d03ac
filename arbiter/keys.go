package arbiter

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/olebedev/when"
	"github.com/olebedev/when/rules/common"
	"github.com/olebedev/when/rules/en"
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
// explicit. now is the call's time: relative dates ("tomorrow 3pm") resolve against it,
// in UTC. The result is deterministic for the same inputs.
func BusinessKey(t *Tool, args map[string]any, explicit string, now time.Time) string {
	if explicit != "" {
		return t.Name + "#" + explicit
	}
	if len(t.Key) == 0 {
		b, _ := json.Marshal(args) // map keys are sorted by encoding/json
		return t.Name + string(b)
	}
	parts := make([]string, 0, len(t.Key))
	for _, k := range t.Key {
		parts = append(parts, k.Arg+"="+canonical(args[k.Arg], k.As, now))
	}
	return t.Name + "(" + strings.Join(parts, ",") + ")"
}

func canonical(v any, as KeyAs, now time.Time) string {
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
			if f, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
	case KeyDatetime:
		if s, ok := v.(string); ok {
			if r, err := dates.Parse(s, now.UTC()); err == nil && r != nil {
				return r.Time.UTC().Format("2006-01-02T15:04")
			}
		}
	}
	return normText(v)
}

// normText trims, case-folds and collapses white space.
func normText(v any) string {
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// describe renders the tool's Describe template with the call's own wording of each
// {arg}; "the <tool> request" when the policy has none.
func describe(t *Tool, args map[string]any) string {
	if t.Describe == "" {
		return "the " + t.Name + " request"
	}
	out := t.Describe
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = strings.ReplaceAll(out, "{"+k+"}", fmt.Sprint(args[k]))
	}
	return out
}
