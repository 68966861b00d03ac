package arbiter

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/olebedev/when/rules"
	"github.com/olebedev/when/rules/common"
	"github.com/olebedev/when/rules/en"
)

// The English reading of an `as: datetime` key argument (issue 13 follow-up). The
// rules are olebedev/when's English and common ones plus the few below; the driver is
// ours, not when.Parser's, because a key must come from the whole text or not at all:
//
//   - Every word must be accounted for: inside the span of a rule that matched, or a
//     filler (dateFillers: "at", "on", "the", "please", ...). "tomorrow at 3"
//     (a bare hour) or "the 3pm one" is not a minute when.Parser would have made one
//     from part of it ("tomorrow" at the current minute, "3pm" today); it is a text
//     key.
//   - Two rules of one kind on separate words ("tomorrow, Friday", "3pm 15:00") are
//     two readings: a text key.
//   - The current time of day is never filled in: a text that names a day but no time
//     ("tomorrow", "Friday", "in 2 days") keys to the day, "2026-10-02"; one relative
//     to the current time ("now", "in 2 hours") is a text key; an hour without minutes
//     has minute 0.
//   - Added rules: "the day after tomorrow" is day+2 (when's rules read "tomorrow" in
//     it); an hour said with a part of the day ("tonight at 8", "8 this evening",
//     "tomorrow afternoon at 3") takes the part's half of the day (20:00, 15:00), and
//     one the part leaves open ("tonight at 2", "in the morning at 12") is a text key.
//   - A bare hour with no part of the day and no am/pm ("at 3") is a text key,
//     distinct from "3pm" (today 15:00): which half the user meant is not known.
//   - "12am" is midnight, 00:00 of the day (when reads it as noon); "12pm" is noon.
//   - A match whose rule applies nothing accounts for no words: "tomorrow at 25pm"
//     (when's Hour rule finds "25pm" and refuses it) is a text key, not the day.

// dateRule is one rule of the English date reading and the kind of thing it says.
type dateRule struct {
	rules.Rule
	kind dateRuleKind
}

// dateRuleKind: a day rule names a day (or a shift of days); a time rule a time of day.
// Two matches of one kind on disjoint words are two readings of the text.
type dateRuleKind uint8

const (
	ruleDay dateRuleKind = iota + 1
	ruleTime
)

// dateRules are applied in this order (later rules override earlier ones, as when's
// Override strategy does): when's English rules, its common ones, then ours.
var dateRules = func() []dateRule {
	kinds := []dateRuleKind{ruleDay, ruleDay, ruleTime, ruleTime, ruleTime, ruleDay, ruleDay, ruleDay} // en.All's order
	if len(kinds) != len(en.All) {
		panic("arbiter: olebedev/when's en.All changed: review dateRules")
	}
	var out []dateRule
	for i, r := range en.All {
		out = append(out, dateRule{r, kinds[i]})
	}
	for _, r := range common.All {
		out = append(out, dateRule{r, ruleDay})
	}
	return append(out,
		dateRule{dayAfterTomorrow, ruleDay},
		dateRule{twelveAM, ruleTime},
		dateRule{partThenHour, ruleTime},
		dateRule{hourThenPart, ruleTime},
	)
}()

// dateFillers are the words a date text may carry besides the date's own words.
var dateFillers = map[string]bool{"at": true, "on": true, "the": true, "for": true, "of": true, "in": true, "please": true}

// errDateAmbiguous is what an added rule returns for a text it cannot read as one
// minute ("tonight at 2"): the text is then a text key.
var errDateAmbiguous = errors.New("ambiguous date")

// dayAfterTomorrow reads "(the) day after tomorrow": two days on. Applied after
// CasualDate, which added a day for its "tomorrow".
var dayAfterTomorrow = &rules.F{
	RegExp: regexp.MustCompile(`(?i)(?:\W|^)((?:the\s+)?day\s+after\s+tomorrow)(?:\W|$)`),
	Applier: func(m *rules.Match, c *rules.Context, o *rules.Options, ref time.Time) (bool, error) {
		c.Duration = 48 * time.Hour
		return true, nil
	},
}

// twelveAM reads "12am", "12:30 a.m.": the first hour of the day, 00:00 and 00:30.
// when's Hour and HourMinute rules read them as noon (12:00, 12:30), so "tomorrow at
// 12am" keyed as "tomorrow at 12pm" did and a midnight booking was deduplicated into
// a noon one (issue 13 follow-ups, round 2). Applied after them, it overrides their
// hour; "12pm" stays 12:00.
var twelveAM = &rules.F{
	RegExp: regexp.MustCompile(`(?i)(?:\W|^)(12)(?:[:.]([0-5]\d))?\s*(a\.?m\.?)(?:\W|$)`),
	Applier: func(m *rules.Match, c *rules.Context, o *rules.Options, ref time.Time) (bool, error) {
		h, mm := 0, 0
		if m.Captures[1] != "" {
			mm, _ = strconv.Atoi(m.Captures[1])
		}
		c.Hour, c.Minute = &h, &mm
		return true, nil
	},
}

// partPattern is a part of the day said with an hour.
const partPattern = `(tonight|(?:this\s+|in\s+the\s+)?(?:morning|afternoon|evening|night))`

// hourPattern is a bare hour with optional minutes and am/pm: groups hour, minute, ampm.
const hourPattern = `(\d{1,2})(?:[:.]([0-5]\d))?(?:\s*(a\.?m\.?|p\.?m\.?))?`

// partThenHour reads "tonight at 8", "this evening 8:30", "tomorrow afternoon at 3".
var partThenHour = &rules.F{
	RegExp: regexp.MustCompile(`(?i)(?:\W|^)` + partPattern + `\s+(?:at\s+)?` + hourPattern + `(?:\W|$)`),
	Applier: func(m *rules.Match, c *rules.Context, o *rules.Options, ref time.Time) (bool, error) {
		return applyPartHour(c, m.Captures[0], m.Captures[1], m.Captures[2], m.Captures[3])
	},
}

// hourThenPart reads "8 tonight", "at 3 in the afternoon", "8:30 this evening".
var hourThenPart = &rules.F{
	RegExp: regexp.MustCompile(`(?i)(?:\W|^)` + hourPattern + `\s+` + partPattern + `(?:\W|$)`),
	Applier: func(m *rules.Match, c *rules.Context, o *rules.Options, ref time.Time) (bool, error) {
		return applyPartHour(c, m.Captures[3], m.Captures[0], m.Captures[1], m.Captures[2])
	},
}

// partHours are, per part of the day, the bare hours it makes clear and what they are
// on a 24-hour clock: "tonight at 8" is 20:00, "in the afternoon at 3" 15:00, "in the
// morning at 9" 09:00. An hour a part leaves open (after midnight tonight, "morning
// at 12") is not in it.
var partHours = map[string][2]int{ // first hour, last hour; the shift is +12 unless morning
	"tonight": {5, 11}, "evening": {5, 11}, "night": {6, 11},
	"afternoon": {1, 7}, "morning": {5, 11},
}

// applyPartHour sets the hour said with a part of the day. An explicit am/pm is left
// to when's Hour rule when it agrees with the part, and is an ambiguity when it does
// not ("tonight at 8am").
func applyPartHour(c *rules.Context, part, hour, minute, ampm string) (bool, error) {
	fields := strings.Fields(strings.ToLower(part))
	p := fields[len(fields)-1]
	h, err := strconv.Atoi(hour)
	if err != nil {
		return false, errDateAmbiguous
	}
	mm := 0
	if minute != "" {
		mm, _ = strconv.Atoi(minute)
	}
	pm := p != "morning"
	if ampm != "" {
		if (strings.ToLower(ampm)[0] == 'p') != pm || h < 1 || h > 12 {
			return false, errDateAmbiguous
		}
		h %= 12
		if pm {
			h += 12
		}
		c.Hour, c.Minute = &h, &mm
		return true, nil
	}
	if h == 12 && p == "afternoon" {
		c.Hour, c.Minute = &h, &mm
		return true, nil
	}
	r := partHours[p]
	if h < r[0] || h > r[1] {
		return false, errDateAmbiguous
	}
	if pm {
		h += 12
	}
	c.Hour, c.Minute = &h, &mm
	return true, nil
}

// readEnglishDate is the English reading of a date text against at (not zero; its
// location is the session's time zone): a minute, the instant in UTC
// ("2006-01-02T15:04", instantKey), or a day in at's zone ("2006-01-02"); ok is false
// when the text is not one (a text key).
func readEnglishDate(text string, at time.Time) (key string, ok bool) {
	type found struct {
		m    *rules.Match
		kind dateRuleKind
		at   int // index in dateRules: the order matches are applied in
	}
	var ms []found
	for i, r := range dateRules {
		if m := r.Find(text); m != nil {
			ms = append(ms, found{m, r.kind, i})
		}
	}
	// Apply the matches in dateRules order; a match whose rule applies nothing ("25pm":
	// when's Hour rule finds it, then refuses hour 25) accounts for no words.
	ctx := &rules.Context{Text: text}
	applied := ms[:0]
	for _, f := range ms {
		ok, err := f.m.Apply(ctx, &dateOptions, at)
		if err != nil {
			return "", false
		}
		if strings.EqualFold(strings.TrimSpace(f.m.Text), "now") {
			return "", false // the current time of day itself
		}
		if ok {
			applied = append(applied, f)
		}
	}
	ms = applied
	if len(ms) == 0 {
		return "", false // nothing applied
	}
	// Every word is inside a match or a filler.
	for _, w := range dateWordSpans(text) {
		if dateFillers[strings.ToLower(text[w[0]:w[1]])] {
			continue
		}
		if !slices.ContainsFunc(ms, func(f found) bool { return f.m.Left <= w[0] && w[1] <= f.m.Right }) {
			return "", false
		}
	}
	// One reading: matches of one kind overlap (nest), never stand apart.
	for i, a := range ms {
		for _, b := range ms[i+1:] {
			if a.kind == b.kind && (a.m.Right <= b.m.Left || b.m.Right <= a.m.Left) {
				return "", false
			}
		}
	}
	if ctx.Duration%(24*time.Hour) != 0 {
		return "", false // relative to the current time ("in 2 hours")
	}
	// Whole days are calendar days in the session's zone: 24 hours from 00:30 on the
	// day a clock falls back is still the same day.
	at = at.AddDate(0, 0, int(ctx.Duration/(24*time.Hour)))
	ctx.Duration = 0
	if ctx.Hour != nil && ctx.Minute == nil {
		zero := 0
		ctx.Minute = &zero // "last night": 23:00, not 23 and the current minute
	}
	t, err := ctx.Time(at)
	if err != nil {
		return "", false
	}
	if ctx.Hour == nil {
		return t.Format("2006-01-02"), true // the day in the session's zone
	}
	return instantKey(t), true
}

// dateOptions are when's default options (its Parse uses them when given none).
var dateOptions = rules.Options{Distance: 5, MatchByOrder: true}

// dateWordSpans returns the byte spans of text's words: runs of letters and digits.
func dateWordSpans(text string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}
