package arbiter

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func bookSlotTool() *Tool { return bookingPolicy().Tools["book_slot"] }

// Case 14: the spec's wordings of one slot are one key, another hour is another.
func TestBusinessKeyDatetime(t *testing.T) {
	tool := bookSlotTool()
	const want = "book_slot(slot=2026-10-02T15:00)" // tomorrow 15:00 from t0
	for _, slot := range []string{"tomorrow 3pm", "tomorrow at 3pm", "Tomorrow at 3 P.M.", "3:00 p.m. tomorrow", "  tomorrow   3pm "} {
		if got := BusinessKey(tool, map[string]any{"slot": slot}, "", "", t0); got != want {
			t.Errorf("BusinessKey(%q) = %q, want %q", slot, got, want)
		}
	}
	if got := BusinessKey(tool, map[string]any{"slot": "tomorrow 4pm"}, "", "", t0); got != "book_slot(slot=2026-10-02T16:00)" {
		t.Errorf("BusinessKey(tomorrow 4pm) = %q, want book_slot(slot=2026-10-02T16:00)", got)
	}
	// Relative dates resolve against the call's time.
	later := t0.Add(24 * time.Hour)
	if a, b := BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", "", t0), BusinessKey(tool, map[string]any{"slot": "tomorrow 3pm"}, "", "", later); a == b {
		t.Errorf("tomorrow 3pm on two days gives one key %q", a)
	}
	// Deterministic.
	for i := 0; i < 3; i++ {
		if got := BusinessKey(tool, map[string]any{"slot": "3:00 p.m. tomorrow"}, "", "", t0); got != want {
			t.Fatalf("run %d: %q", i, got)
		}
	}
}

func TestBusinessKeyOtherNormalisations(t *testing.T) {
	cases := []struct {
		name     string
		tool     *Tool
		a, b     map[string]any
		explicit [2]string
		same     bool
	}{
		{"datetime falls back to text when unparseable",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "slot", As: KeyDatetime}}},
			map[string]any{"slot": "  The  BLUE room"}, map[string]any{"slot": "the blue room"}, [2]string{}, true},
		{"text trims, folds case and collapses space",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "name"}}},
			map[string]any{"name": " Ada  Lovelace "}, map[string]any{"name": "ada lovelace"}, [2]string{}, true},
		{"text keeps different words apart",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "name", As: KeyText}}},
			map[string]any{"name": "Ada"}, map[string]any{"name": "Grace"}, [2]string{}, false},
		{"number: 3.0 and \" 3.0 \" agree",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "n", As: KeyNumber}}},
			map[string]any{"n": 3.0}, map[string]any{"n": " 3.0 "}, [2]string{}, true},
		{"number: 3 and 4 differ",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "n", As: KeyNumber}}},
			map[string]any{"n": 3.0}, map[string]any{"n": 4.0}, [2]string{}, false},
		{"exact keeps case",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "id", As: KeyExact}}},
			map[string]any{"id": "AB"}, map[string]any{"id": "ab"}, [2]string{}, false},
		{"key args only: other args do not matter",
			&Tool{Name: "t", Key: []KeyArg{{Arg: "id", As: KeyExact}}},
			map[string]any{"id": "x", "note": "a"}, map[string]any{"id": "x", "note": "b"}, [2]string{}, true},
		{"no key: the whole args, order-free",
			&Tool{Name: "t"},
			map[string]any{"a": 1.0, "b": "x"}, map[string]any{"b": "x", "a": 1.0}, [2]string{}, true},
		{"no key: any arg counts",
			&Tool{Name: "t"},
			map[string]any{"a": 1.0}, map[string]any{"a": 2.0}, [2]string{}, false},
		{"explicit key wins over the args",
			bookSlotTool(),
			map[string]any{"slot": "tomorrow 3pm"}, map[string]any{"slot": "friday 9am"}, [2]string{"slot-42", "slot-42"}, true},
		{"explicit keys differ",
			bookSlotTool(),
			map[string]any{"slot": "tomorrow 3pm"}, map[string]any{"slot": "tomorrow 3pm"}, [2]string{"slot-42", "slot-43"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := BusinessKey(tc.tool, tc.a, tc.explicit[0], "", t0)
			b := BusinessKey(tc.tool, tc.b, tc.explicit[1], "", t0)
			if (a == b) != tc.same {
				t.Errorf("keys %q and %q: same=%v, want %v", a, b, a == b, tc.same)
			}
		})
	}
	// Different tools never share a key.
	if a, b := BusinessKey(&Tool{Name: "a"}, nil, "k", "", t0), BusinessKey(&Tool{Name: "b"}, nil, "k", "", t0); a == b {
		t.Errorf("tools a and b share key %q", a)
	}
}

// TestBusinessKeyLanguages (issue 13, rule 8): in a session of each language, its
// wordings of one slot share one key, the minute English gives for the same slot;
// another hour or another day is another key. English keys are today's.
func TestBusinessKeyLanguages(t *testing.T) {
	tool := bookSlotTool()
	key := func(lang, slot string) string { return BusinessKey(tool, map[string]any{"slot": slot}, "", lang, t0) }
	const tomorrow3pm = "book_slot(slot=2026-10-02T15:00)"
	for _, c := range []struct {
		lang  string
		same  []string // one key: tomorrow 15:00
		other []string // each another key
	}{
		{"en", []string{"tomorrow 3pm", "tomorrow at 3pm", "Tomorrow at 3 P.M.", "3:00 p.m. tomorrow"},
			[]string{"tomorrow 4pm", "today at 3pm", "tomorrow 3am"}},
		{"es", []string{"mañana a las 3pm", "mañana a las 15:00", "mañana 3 de la tarde", "Mañana a las 3 p. m.",
			"mañana a las tres de la tarde", "mañana a las 15 horas", "manana a las 15:00",
			"tomorrow at 3pm", "3:00 p.m. tomorrow"},
			[]string{"mañana a las 4pm", "hoy a las 3pm", "mañana a las 3 de la mañana", "pasado mañana a las 3pm",
				"mañana a las 3 y media de la tarde", "mañana a las 17:00"}},
		{"fr", []string{"demain à 15h", "demain 15:00", "demain à 15 heures", "demain à 3h de l'après-midi",
			"demain à trois heures de l'après-midi", "Demain a 15h00", "tomorrow at 3pm"},
			[]string{"demain à 16h", "aujourd'hui à 15h", "après-demain à 15h", "demain à 15h30", "demain à 3h du matin"}},
		{"de", []string{"morgen um 15 Uhr", "morgen 15:00", "morgen um 15:00 Uhr", "morgen um 3 Uhr nachmittags",
			"Morgen um fünfzehn Uhr", "morgen um 15.00 Uhr", "tomorrow at 3pm"},
			[]string{"morgen um 16 Uhr", "heute um 15 Uhr", "übermorgen um 15 Uhr", "morgen um halb drei nachmittags",
				"morgen um 3 Uhr"}},
	} {
		for _, lang := range []string{c.lang, c.lang + "-" + map[string]string{"en": "GB", "es": "MX", "fr": "CA", "de": "AT"}[c.lang]} {
			for _, slot := range c.same {
				if got := key(lang, slot); got != tomorrow3pm {
					t.Errorf("%s: BusinessKey(%q) = %q, want %q", lang, slot, got, tomorrow3pm)
				}
			}
			seen := map[string]string{tomorrow3pm: c.same[0]}
			for _, slot := range c.other {
				got := key(lang, slot)
				if first, dup := seen[got]; dup {
					t.Errorf("%s: %q and %q share the key %q", lang, slot, first, got)
				}
				seen[got] = slot
			}
		}
	}
	// Other days and dates, one of each language.
	for _, c := range []struct{ lang, slot, want string }{
		{"es", "el próximo viernes a las 10 de la mañana", "2026-10-02T10:00"},
		{"es", "el 5 de octubre a las 15:00", "2026-10-05T15:00"},
		{"es", "a las 4 menos cuarto de la tarde", "2026-10-01T15:45"},
		{"es", "mañana a la una del mediodía", "2026-10-02T13:00"},
		{"es", "esta noche a las 9", "2026-10-01T21:00"},
		{"fr", "le 5 octobre à 15h", "2026-10-05T15:00"},
		{"fr", "demain à midi et demi", "2026-10-02T12:30"},
		{"fr", "demain à 4 heures moins le quart de l'après-midi", "2026-10-02T15:45"},
		{"fr", "vendredi prochain à 10h", "2026-10-02T10:00"},
		{"de", "am 5. Oktober um 15 Uhr", "2026-10-05T15:00"},
		{"de", "morgen um halb 4 nachmittags", "2026-10-02T15:30"},
		{"de", "morgen um viertel nach drei nachmittags", "2026-10-02T15:15"},
		{"de", "heute Abend um 8", "2026-10-01T20:00"},
	} {
		if got, want := key(c.lang, c.slot), "book_slot(slot="+c.want+")"; got != want {
			t.Errorf("%s: BusinessKey(%q) = %q, want %q", c.lang, c.slot, got, want)
		}
	}
	// The memo keys by language: the same wording, read first in Spanish, is still read
	// in English (where "mañana", "a" and "las" are no date words: a text key, no
	// longer "3pm" today from part of it).
	if es, en := key("es", "mañana a las 3pm"), key("en", "mañana a las 3pm"); es != tomorrow3pm || en != "book_slot(slot=mañana a las 3pm)" {
		t.Errorf("mañana a las 3pm: es %q, en %q", es, en)
	}
	// Text that is no date falls back to text, as in English.
	if a, b := key("es", "  La  sala AZUL"), key("es", "la sala azul"); a != b || a != "book_slot(slot=la sala azul)" {
		t.Errorf("es text keys %q and %q, want book_slot(slot=la sala azul)", a, b)
	}
}

// TestBusinessKeyLanguagesProperty: any hour and minute, said each language's ways,
// is the key English gives "tomorrow at H:MMpm"; another minute is another key. A
// language without a date table keys as English, whatever the text.
func TestBusinessKeyLanguagesProperty(t *testing.T) {
	tool := bookSlotTool()
	key := func(lang, slot string) string { return BusinessKey(tool, map[string]any{"slot": slot}, "", lang, t0) }
	// form fills a form with the hour, the minute and the 24-hour hour; a form uses
	// some of them, and the rest would print as "%!(EXTRA ...)", which is not part of
	// the wording (and, since every word of a date must be read, would make it text).
	form := func(f string, h, m int) string {
		s, _, _ := strings.Cut(fmt.Sprintf(f, h, m, h+12), "%!(EXTRA")
		return s
	}
	rapid.Check(t, func(t *rapid.T) {
		h := rapid.IntRange(1, 11).Draw(t, "hour")
		m := rapid.SampledFrom([]int{0, 5, 15, 30, 45, 59}).Draw(t, "minute")
		want := key("en", fmt.Sprintf("tomorrow at %d:%02dpm", h, m))
		if want != fmt.Sprintf("book_slot(slot=2026-10-02T%02d:%02d)", h+12, m) {
			t.Fatalf("English key %q", want)
		}
		for lang, forms := range map[string][]string{
			"es": {"mañana a las %d:%02dpm", "mañana a las %[3]d:%02[2]d", "mañana %d:%02d de la tarde", "mañana a las %d:%02d p. m."},
			"fr": {"demain à %[3]dh%02[2]d", "demain %[3]d:%02[2]d", "demain à %dh%02d de l'après-midi", "demain à %[3]d heures %02[2]d"},
			"de": {"morgen um %[3]d:%02[2]d Uhr", "morgen %[3]d:%02[2]d", "morgen um %d:%02d Uhr nachmittags", "morgen um %[3]d Uhr %02[2]d"},
		} {
			for _, f := range forms {
				slot := form(f, h, m)
				if got := key(lang, slot); got != want {
					t.Fatalf("%s: BusinessKey(%q) = %q, want %q", lang, slot, got, want)
				}
				if other := key(lang, form(f, h, (m+1)%60)); other == want {
					t.Fatalf("%s: another minute of %q has the same key %q", lang, slot, other)
				}
			}
		}
		s := rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"tomorrow 3pm", "mañana a las 3pm", "demain à 15h", "5/10 15:00", "friday"})).Draw(t, "text")
		for _, lang := range []string{"es", "fr", "de"} {
			if a, b := key(lang, s), key(lang, s); a != b {
				t.Fatalf("%s: BusinessKey(%q) = %q, then %q", lang, s, a, b)
			}
		}
		for _, lang := range []string{"", "it", "pt-BR", "EN-us", "x"} {
			if got, want := key(lang, s), key("en", s); got != want {
				t.Fatalf("%q: BusinessKey(%q) = %q, English %q", lang, s, got, want)
			}
		}
	})
}

// dateBenchCases are the wordings BenchmarkBusinessKeyDatetime keys, one per language.
var dateBenchCases = []struct{ lang, slot string }{
	{"en", "tomorrow at 3pm"}, {"es", "mañana a las 3pm"}, {"fr", "demain à 15h"}, {"de", "morgen um 15 Uhr"},
	{"iso", "2026-11-05T10:30:00+01:00"}, // issue 25: read before the wordings, no memo needed
}

// BenchmarkBusinessKeyDatetime keys an `as: datetime` argument: hit, the same wording
// at the same minute again (the memo answers); miss, a new minute every time (a parse).
func BenchmarkBusinessKeyDatetime(b *testing.B) {
	tool := bookSlotTool()
	for _, c := range dateBenchCases {
		args := map[string]any{"slot": c.slot}
		b.Run("hit/"+c.lang, func(b *testing.B) {
			BusinessKey(tool, args, "", c.lang, t0)
			b.ReportAllocs()
			for b.Loop() {
				BusinessKey(tool, args, "", c.lang, t0)
			}
		})
		b.Run("miss/"+c.lang, func(b *testing.B) {
			at := t0
			b.ReportAllocs()
			for b.Loop() {
				at = at.Add(time.Minute)
				BusinessKey(tool, args, "", c.lang, at)
			}
		})
	}
}

// FuzzTranslateDate: any wording translates without panicking, the same way twice.
func FuzzTranslateDate(f *testing.F) {
	for _, s := range []string{"mañana a las 3pm", "demain à 15h30", "morgen um halb vier", "1er", "12:", "99:99",
		"3:3", "5.", ":00", "halb", "viertel vor", "a las", "y media", "\xff", "2026-10-05", "5/10 15.30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range []string{"es", "fr", "de"} {
			table, _ := dateLanguage(l)
			if a, b := translateDate(table, s), translateDate(table, s); a != b {
				t.Fatalf("%s: %q translates to %q, then %q", l, s, a, b)
			}
		}
	})
}

// TestBusinessKeyNormalised (issue 13 follow-up): a key argument that differs only by
// format characters, no-break spaces or fullwidth forms is the same key, for text,
// datetime and number arguments alike; `as: exact` stays exact.
func TestBusinessKeyNormalised(t *testing.T) {
	key := func(as KeyAs, v any) string {
		return BusinessKey(&Tool{Name: "t", Key: []KeyArg{{Arg: "a", As: as}}}, map[string]any{"a": v}, "", "", t0)
	}
	cases := []struct {
		as   KeyAs
		a, b any
		want string // the key of both; "" when they must differ
	}{
		{KeyDatetime, "tomorrow 3\u00a0pm", "tomorrow 3 pm", "t(a=2026-10-02T15:00)"},
		{KeyDatetime, "tomorrow ３pm", "tomorrow 3pm", "t(a=2026-10-02T15:00)"},
		{KeyDatetime, "ｔｏｍｏｒｒｏｗ　３：００ ｐｍ", "tomorrow 3:00 pm", "t(a=2026-10-02T15:00)"}, // fullwidth, ideographic space
		{KeyDatetime, "tomor\u200brow 3pm", "tomorrow 3pm", "t(a=2026-10-02T15:00)"},
		{KeyDatetime, "\ufefftomorrow at 3\u202fp.m.", "tomorrow at 3 p.m.", "t(a=2026-10-02T15:00)"},
		{KeyText, "Ada\u00a0Lovelace", "ada lovelace", "t(a=ada lovelace)"},
		{KeyText, "Ada Love\u00adlace", "Ada Lovelace", "t(a=ada lovelace)"},
		{KeyText, "ＲＯＯＭ ４", "room 4", "t(a=room 4)"},
		{KeyText, "\u200eroom 4\u200f", "room 4", "t(a=room 4)"},
		{KeyNumber, "４２", 42.0, "t(a=42)"},
		{KeyNumber, "\u200b42\u00a0", "42", "t(a=42)"},
		{KeyExact, "ＡＢ", "AB", ""},
		{KeyText, "room 4", "room 5", ""},
	}
	for _, c := range cases {
		a, b := key(c.as, c.a), key(c.as, c.b)
		switch {
		case c.want == "" && a == b:
			t.Errorf("%s %q and %q: one key %q, want two", c.as, c.a, c.b, a)
		case c.want != "" && (a != c.want || b != c.want):
			t.Errorf("%s %q -> %q and %q -> %q, want both %q", c.as, c.a, a, c.b, b, c.want)
		}
	}
	// In a Spanish session too.
	if a, b := BusinessKey(bookSlotTool(), map[string]any{"slot": "mañana a las ３\u00a0pm"}, "", "es", t0), BusinessKey(bookSlotTool(), map[string]any{"slot": "mañana a las 3pm"}, "", "es", t0); a != b {
		t.Errorf("es: %q and %q", a, b)
	}
}

// TestBusinessKeyNonString (issue 13 follow-up): a key argument that is not a string
// goes into the key as canonical JSON, whatever its KeyAs: object keys sorted, one
// form per number (2 == 2.0), a list is a list (not Go's "[a b]", which was the key of
// the string "[a b]" too). A string keys as before.
func TestBusinessKeyNonString(t *testing.T) {
	key := func(as KeyAs, v any) string {
		return BusinessKey(&Tool{Name: "t", Key: []KeyArg{{Arg: "a", As: as}}}, map[string]any{"a": v}, "", "", t0)
	}
	for _, as := range []KeyAs{KeyText, KeyDatetime, KeyNumber, ""} {
		for _, c := range []struct {
			v    any
			want string
		}{
			{2.0, "t(a=2)"},
			{json.Number("2.0"), "t(a=2)"},
			{2, "t(a=2)"},
			{2.5, "t(a=2.5)"},
			{1e21, "t(a=1e+21)"},
			{math.Copysign(0, -1), "t(a=0)"},
			{true, "t(a=true)"},
			{false, "t(a=false)"},
			{[]any{"a", "b"}, `t(a=["a","b"])`},
			{[]any{2.0, json.Number("3.50")}, `t(a=[2,3.5])`},
			{map[string]any{"b": 1.0, "a": []any{true}}, `t(a={"a":[true],"b":1})`},
			{map[string]any{"z": map[string]any{"y": 2.0, "x": math.NaN()}}, `t(a={"z":{"x":"NaN","y":2}})`},
			{[]any{}, "t(a=[])"},
			{map[string]any{}, "t(a={})"},
		} {
			if as == KeyNumber {
				if _, isNum := c.v.(float64); isNum {
					continue // `as: number` prints a float64 itself (TestBusinessKeyOtherNormalisations)
				}
			}
			if got := key(as, c.v); got != c.want {
				t.Errorf("as %q: key of %#v = %q, want %q", as, c.v, got, c.want)
			}
		}
	}
	// A list and the string Go printed it as are two keys; an object's key order does
	// not matter; strings key as before.
	pairs := []struct {
		a, b any
		same bool
	}{
		{[]any{"a", "b"}, "[a b]", false},
		{map[string]any{"x": 1.0, "y": 2.0}, map[string]any{"y": 2.0, "x": 1.0}, true},
		{map[string]any{"x": 1.0}, map[string]any{"x": 1.5}, false},
		{[]any{1.0, 2.0}, []any{2.0, 1.0}, false},
		{true, "true", true}, // a text key folds case: "True" and true agree
		{" Ada  Lovelace ", "ada lovelace", true},
		{2.0, "2", true},
	}
	for _, p := range pairs {
		if a, b := key(KeyText, p.a), key(KeyText, p.b); (a == b) != p.same {
			t.Errorf("keys of %#v and %#v: %q and %q, same %v", p.a, p.b, a, b, p.same)
		}
	}
	// With no key args, the whole args are canonical JSON too: a NaN no longer gives
	// every such call the key "t".
	whole := &Tool{Name: "t"}
	if a, b := BusinessKey(whole, map[string]any{"n": math.NaN()}, "", "", t0), BusinessKey(whole, map[string]any{"n": 1.0}, "", "", t0); a == b || a != `t{"n":"NaN"}` {
		t.Errorf("whole args with NaN %q, with 1 %q", a, b)
	}
	if got := BusinessKey(whole, nil, "", "", t0); got != "tnull" {
		t.Errorf("no args: %q, want tnull (as before)", got)
	}
}

// TestCanonicalJSONProperties: canonical JSON is deterministic, reads back as the same
// value, and 2 and 2.0 (and json.Number spellings of one number) agree.
func TestCanonicalJSONProperties(t *testing.T) {
	var value func(depth int) *rapid.Generator[any]
	value = func(depth int) *rapid.Generator[any] {
		leaf := rapid.OneOf(
			rapid.Map(rapid.Float64(), func(f float64) any { return f }),
			rapid.Map(rapid.IntRange(-1000, 1000), func(i int) any { return float64(i) }),
			rapid.Map(rapid.Bool(), func(b bool) any { return b }),
			rapid.Map(rapid.String(), func(s string) any { return s }),
		)
		if depth == 0 {
			return leaf
		}
		return rapid.OneOf(leaf,
			rapid.Map(rapid.SliceOfN(value(depth-1), 0, 4), func(xs []any) any { return xs }),
			rapid.Map(rapid.MapOfN(rapid.StringN(0, 4, -1), value(depth-1), 0, 4), func(m map[string]any) any { return m }),
		)
	}
	rapid.Check(t, func(t *rapid.T) {
		v := value(2).Draw(t, "v")
		a := canonicalJSON(v)
		if b := canonicalJSON(v); a != b {
			t.Fatalf("canonicalJSON(%#v) = %s, then %s", v, a, b)
		}
		var back any
		if err := json.Unmarshal([]byte(a), &back); err != nil {
			t.Fatalf("canonicalJSON(%#v) = %s, not JSON: %v", v, a, err)
		}
		if again := canonicalJSON(back); again != a {
			t.Fatalf("canonicalJSON(%#v) = %s, read back and encoded again %s", v, a, again)
		}
		n := rapid.IntRange(-1e6, 1e6).Draw(t, "n")
		if x, y, z := canonicalJSON(float64(n)), canonicalJSON(json.Number(fmt.Sprintf("%d.0", n))), canonicalJSON(n); x != y || x != z {
			t.Fatalf("%d: %s, %s, %s", n, x, y, z)
		}
	})
}

// TestBusinessKeyDatetimeEveryWord (issue 13 follow-up): an `as: datetime` argument is
// a minute only when the date rules account for every word but fillers; a day when it
// names no time of day (never the current time of day); otherwise its text key. t0 is
// Thursday 2026-10-01 09:00 UTC.
func TestBusinessKeyDatetimeEveryWord(t *testing.T) {
	tool := bookSlotTool()
	key := func(lang, slot string, at time.Time) string {
		k := BusinessKey(tool, map[string]any{"slot": slot}, "", lang, at)
		return strings.TrimSuffix(strings.TrimPrefix(k, "book_slot(slot="), ")")
	}
	friday := t0.Add(24 * time.Hour)
	saturday := t0.Add(48 * time.Hour)
	cases := []struct {
		lang, slot string
		at         time.Time
		want       string
	}{
		// The day after tomorrow: not tomorrow, as when's rules read it.
		{"en", "the day after tomorrow at 3pm", t0, "2026-10-03T15:00"},
		{"en", "day after tomorrow at 3pm", t0, "2026-10-03T15:00"},
		{"en", "the day after tomorrow", t0, "2026-10-03"},
		// An hour with a part of the day takes its half.
		{"en", "tonight at 8", t0, "2026-10-01T20:00"},
		{"en", "tonight at 8:30", t0, "2026-10-01T20:30"},
		{"en", "tonight 8", t0, "2026-10-01T20:00"},
		{"en", "8 tonight", t0, "2026-10-01T20:00"},
		{"en", "tonight at 8 p.m.", t0, "2026-10-01T20:00"},
		{"en", "this evening at 7", t0, "2026-10-01T19:00"},
		{"en", "tomorrow evening at 7", t0, "2026-10-02T19:00"},
		{"en", "tomorrow afternoon at 3", t0, "2026-10-02T15:00"},
		{"en", "at 3 in the afternoon", t0, "2026-10-01T15:00"},
		{"en", "tomorrow at 12 in the afternoon", t0, "2026-10-02T12:00"},
		{"en", "tomorrow morning at 9", t0, "2026-10-02T09:00"},
		{"en", "tonight at 2", t0, "tonight at 2"},     // after midnight? a text key
		{"en", "tonight at 8am", t0, "tonight at 8am"}, // contradicts itself
		{"en", "in the morning at 12", t0, "in the morning at 12"},
		// A bare hour, no am/pm and no part of the day: a text key, not "3pm".
		{"en", "at 3", t0, "at 3"},
		{"en", "tomorrow at 3", t0, "tomorrow at 3"},
		{"en", "at 3 tomorrow", t0, "at 3 tomorrow"},
		{"en", "3pm", t0, "2026-10-01T15:00"},
		// 12am is midnight, 00:00 of the day; 12pm noon (issue 13 follow-ups, round 2:
		// 12am keyed as noon and deduplicated a midnight booking into a noon one). An
		// hour no clock has is a text key, not the day.
		{"en", "tomorrow at 12am", t0, "2026-10-02T00:00"},
		{"en", "tomorrow at 12 a.m.", t0, "2026-10-02T00:00"},
		{"en", "tomorrow at 12:30am", t0, "2026-10-02T00:30"},
		{"en", "tomorrow at 12:30 a.m.", t0, "2026-10-02T00:30"},
		{"en", "12am", t0, "2026-10-01T00:00"},
		{"en", "tomorrow at 12pm", t0, "2026-10-02T12:00"},
		{"en", "tomorrow at 12:30pm", t0, "2026-10-02T12:30"},
		{"en", "tomorrow at 11am", t0, "2026-10-02T11:00"},
		{"en", "tomorrow at 1am", t0, "2026-10-02T01:00"},
		{"en", "tomorrow at 25pm", t0, "tomorrow at 25pm"},
		{"en", "tomorrow at 13pm", t0, "tomorrow at 13pm"},
		{"en", "tomorrow at 25:00", t0, "tomorrow at 25:00"},
		{"en", "tonight at 12am", t0, "tonight at 12am"},
		{"es", "mañana a las 12am", t0, "2026-10-02T00:00"},
		{"es", "mañana a las 25pm", t0, "mañana a las 25pm"},
		{"fr", "demain à 12h30am", t0, "2026-10-02T00:30"},
		{"de", "morgen um 12am", t0, "2026-10-02T00:00"},
		// A weekday is the next one (a week on when it is today).
		{"en", "Friday at 3pm", t0, "2026-10-02T15:00"},
		{"en", "friday at 3 pm", t0, "2026-10-02T15:00"},
		{"en", "on Friday at 3pm", t0, "2026-10-02T15:00"},
		{"en", "Friday at 3pm", saturday, "2026-10-09T15:00"},
		{"en", "Friday at 3pm", friday, "2026-10-09T15:00"},
		{"en", "next Friday at 10am", t0, "2026-10-02T10:00"},
		// Ambiguous or partial: text keys.
		{"en", "next week", t0, "next week"},
		{"en", "Friday next week", t0, "friday next week"},
		{"en", "the 3pm one", t0, "the 3pm one"},
		{"en", "room 3pm", t0, "room 3pm"},
		{"en", "tomorrow at 3pm or 4pm", t0, "tomorrow at 3pm or 4pm"},
		{"en", "tomorrow, Friday", t0, "tomorrow, friday"},
		{"en", "3pm 15:00", t0, "3pm 15:00"},
		// Fillers do not count.
		{"en", "tomorrow at 3pm please", t0, "2026-10-02T15:00"},
		{"en", "for tomorrow at 3pm, please", t0, "2026-10-02T15:00"},
		{"en", "on the 5th of October at 3pm", t0, "2026-10-05T15:00"},
		{"en", "tomorrow in the afternoon", t0, "2026-10-02T15:00"},
		// Never the current time of day: a day alone keys to the day; a time relative
		// to now is a text key.
		{"en", "tomorrow", t0, "2026-10-02"},
		{"en", "tomorrow", t0.Add(7 * time.Minute), "2026-10-02"},
		{"en", "Friday", t0, "2026-10-02"},
		{"en", "in 2 days", t0, "2026-10-03"},
		{"en", "today", t0, "2026-10-01"},
		{"en", "now", t0, "now"},
		{"en", "in 2 hours", t0, "in 2 hours"},
		{"en", "in 30 minutes", t0, "in 30 minutes"},
		{"en", "last night", t0.Add(17 * time.Minute), "2026-09-30T23:00"},
		// Other languages: their "please", a word left over.
		{"es", "mañana a las 3pm, por favor", t0, "2026-10-02T15:00"},
		{"es", "mañana", t0, "2026-10-02"},
		{"es", "mañana a las 3pm en la sala azul", t0, "mañana a las 3pm en la sala azul"},
		{"fr", "demain à 15h s'il vous plaît", t0, "2026-10-02T15:00"},
		{"de", "morgen um 15 Uhr bitte", t0, "2026-10-02T15:00"},
		{"de", "morgen um 15 Uhr im Raum 4", t0, "morgen um 15 uhr im raum 4"},
	}
	for _, c := range cases {
		if got := key(c.lang, c.slot, c.at); got != c.want {
			t.Errorf("%s at %s: key of %q = %q, want %q", c.lang, c.at.Format("Mon 15:04"), c.slot, got, c.want)
		}
	}
	// The brief's three wordings of one slot are one key.
	for _, slot := range []string{"tomorrow 3pm", "tomorrow at 3 pm", "3pm tomorrow"} {
		if got := key("en", slot, t0); got != "2026-10-02T15:00" {
			t.Errorf("key of %q = %q, want 2026-10-02T15:00", slot, got)
		}
	}
	// Every hour of a 12-hour clock: h am is h mod 12, h pm is h mod 12 + 12.
	for h := 1; h <= 12; h++ {
		for _, m := range []string{"", ":30"} {
			mm := "00"
			if m != "" {
				mm = "30"
			}
			if got, want := key("en", fmt.Sprintf("tomorrow at %d%sam", h, m), t0), fmt.Sprintf("2026-10-02T%02d:%s", h%12, mm); got != want {
				t.Errorf("tomorrow at %d%sam: %q, want %q", h, m, got, want)
			}
			if got, want := key("en", fmt.Sprintf("tomorrow at %d%s pm", h, m), t0), fmt.Sprintf("2026-10-02T%02d:%s", h%12+12, mm); got != want {
				t.Errorf("tomorrow at %d%s pm: %q, want %q", h, m, got, want)
			}
		}
	}
	// Midnight and noon of one day are two keys.
	if a, b := key("en", "tomorrow at 12am", t0), key("en", "tomorrow at 12pm", t0); a == b {
		t.Errorf("tomorrow at 12am and at 12pm: one key %q", a)
	}
	// A day alone, a bare hour and the minute stay three keys.
	if a, b, c := key("en", "tomorrow", t0), key("en", "tomorrow at 3", t0), key("en", "tomorrow at 3pm", t0); a == b || b == c || a == c {
		t.Errorf("tomorrow %q, tomorrow at 3 %q, tomorrow at 3pm %q", a, b, c)
	}
	// A zero reference reads no clock: a text key.
	if got := key("en", "tomorrow 3pm", time.Time{}); got != "tomorrow 3pm" {
		t.Errorf("zero time: %q", got)
	}
}

// TestDateKeyNeverTheCurrentMinute: whatever the text, its key does not change with
// the minute of the reference time within one hour (no key carries the current time
// of day); and a key that is a minute or a day comes from a text in which every word
// is a date word or a filler.
func TestDateKeyNeverTheCurrentMinute(t *testing.T) {
	tool := bookSlotTool()
	words := []string{"tomorrow", "today", "tonight", "friday", "next", "week", "the", "day", "after", "at", "on", "please",
		"3", "3pm", "8", "15:00", "3:30", "p.m.", "in", "2", "hours", "days", "morning", "evening", "afternoon", "now",
		"october", "5th", "room", "blue", "or", ",", "12am", "12pm", "12:30am", "25pm", "13pm"}
	rapid.Check(t, func(t *rapid.T) {
		ws := rapid.SliceOfN(rapid.SampledFrom(words), 1, 6).Draw(t, "words")
		slot := strings.Join(ws, " ")
		base := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
		m := rapid.IntRange(1, 59).Draw(t, "minute")
		a := BusinessKey(tool, map[string]any{"slot": slot}, "", "", base)
		b := BusinessKey(tool, map[string]any{"slot": slot}, "", "", base.Add(time.Duration(m)*time.Minute))
		if a != b {
			t.Fatalf("key of %q at 09:00 %q, at 09:%02d %q", slot, a, m, b)
		}
		if a != "book_slot(slot="+normText(slot)+")" {
			for _, w := range ws {
				if w == "room" || w == "blue" || w == "or" || w == "25pm" || w == "13pm" {
					t.Fatalf("key of %q is a date, %q, though %q is no date word", slot, a, w)
				}
			}
		}
	})
}
