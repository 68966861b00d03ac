package arbiter

import (
	"fmt"
	"strings"
	"unicode"
)

// Dates in the session's language (issue 13, rule 8). `as: datetime` keys are parsed
// with olebedev/when's English rules (keys.go); it has no Spanish, French or German
// ones. For a session in one of those languages the wording is first put into the
// English those rules read: "mañana a las 3pm", "mañana 3 de la tarde", "demain à 15h"
// and "morgen um 15 Uhr" all become "tomorrow at 15:00". English (and any language
// without a table here) is parsed as written, as before.
//
// The translation reads words, not grammar: day words ("mañana", "demain",
// "übermorgen"), weekdays, months with a day number before them ("5 de octubre",
// "le 5 octobre", "am 5. Oktober"), the next-markers ("el próximo viernes", "vendredi
// prochain"), a time of day — digits ("15:00", "15h30", "3pm", "15 Uhr 30"), or a number
// word after an at-word ("a las tres"), with "y media", "et quart", "halb drei",
// "viertel vor" — and the part of the day that sets its half ("de la tarde",
// "du soir", "nachmittags"). A number counts as an hour only where it must be one: with
// minutes or a unit ("15:00", "15h", "15 Uhr"), after an at-word ("a las", "à", "um"),
// or before a part of the day or minutes; otherwise it is left as written. The output
// is the day words in order, then "at H:MM", then every word the tables do not know,
// unchanged (so an English wording in a Spanish session reads as it does in English:
// "tomorrow at 3pm" -> "tomorrow at 15:00"). A word left over makes the text a text
// key (readEnglishDate accounts for every word), so the tables also drop the words of
// "please" ("por favor", "s'il vous plaît", "bitte").
//
// The tables are data: datePhrases below, one per language, keyed by the folded words
// (lower case, accents dropped: "manana", "apres demain"; apostrophes, hyphens and
// dots separate words).

// dateLanguage returns the date table of a session language (BCP 47: its primary
// subtag, case-insensitive), and the language the memo keys it under: "en" with no
// table (English rules, the wording as written).
func dateLanguage(lang string) (*dateTable, string) {
	switch lang {
	case "", "en":
		return nil, "en"
	case "es", "fr", "de":
		return datePhrases[lang], lang
	}
	l := strings.ToLower(lang)
	if i := strings.IndexAny(l, "-_"); i >= 0 {
		l = l[:i]
	}
	if t, ok := datePhrases[l]; ok {
		return t, l
	}
	return nil, "en"
}

// dateKind is what a word (or phrase) of a date table is.
type dateKind uint8

const (
	dateDay     dateKind = iota + 1 // English day words ("tomorrow", "in 2 days", "friday"); with part, a part of the day too ("esta tarde")
	datePart                        // only a part of the day ("de la tarde"): it sets the hour's half
	dateMonth                       // a month: a day number before it is the day ("5 october")
	dateNext                        // "next": put before the weekday it follows
	dateAt                          // "a las", "à", "um": the number after it is an hour
	dateUnit                        // "h", "heures", "Uhr": the number before it is an hour
	dateNumber                      // a number word ("tres", "quinze", "drei")
	dateMinutes                     // "y media" (+30), "et quart" (+15), "menos cuarto" (-15), after an hour
	dateBefore                      // "halb" (-30), "viertel vor" (-15), "viertel nach" (+15): before an hour
	dateClock                       // "mediodía", "minuit": a time of day (n minutes after midnight)
	dateAMPM                        // "p m" (from "p.m."), "pm", "am"
	dateDrop                        // a function word, dropped ("el", "le", "der")
)

// dayPart is a part of the day, which decides the hour's half.
type dayPart uint8

const (
	partNone dayPart = iota
	partMorning
	partNoon
	partAfternoon
	partEvening
	partNight
	partAM
	partPM
)

// partWords are the English words of a part of the day given without an hour
// ("mañana por la tarde" -> "tomorrow afternoon").
var partWords = map[dayPart]string{partMorning: "morning", partNoon: "noon", partAfternoon: "afternoon", partEvening: "evening", partNight: "evening"}

// dateWord is one entry of a date table.
type dateWord struct {
	kind dateKind
	en   string  // dateDay, dateMonth: the English words
	n    int     // dateNumber: the number; dateMinutes, dateBefore: minutes; dateClock: minutes after midnight
	part dayPart // dateDay, datePart, dateAMPM
}

// dateTable is one language's table: folded words (one or more, joined by a space) to
// their meaning, and for each first word the most words of a phrase it starts.
type dateTable struct {
	words   map[string]dateWord
	longest map[string]int
}

// translateDate rewrites text, in the language of table, into the English that
// olebedev/when reads (see the top of this file): it reads the words into lexemes
// (lexDate), then resolves them in order (dateTranslator), then writes the days, the
// time and the words it did not know. Pure.
func translateDate(table *dateTable, text string) string {
	t := &dateTranslator{lx: lexDate(table, text)}
	for k := 0; k < len(t.lx); k++ {
		k = t.take(k)
	}
	return t.english()
}

// lexeme is one word or phrase of a date text, as its table reads it.
type lexeme struct {
	w   dateWord
	raw string // the word as written (lower case), for a word the table does not know
	num dateNum
}

// lexDate reads text's words into lexemes, the longest phrase of the table first; a
// word the table does not know keeps its text and, when it is one, its number.
func lexDate(table *dateTable, text string) []lexeme {
	toks := dateTokens(text)
	var lx []lexeme
	for i := 0; i < len(toks); {
		n, w := 0, dateWord{}
		for k := min(table.longest[toks[i]], len(toks)-i); k > 1 && n == 0; k-- {
			if e, ok := table.words[strings.Join(toks[i:i+k], " ")]; ok {
				n, w = k, e
			}
		}
		if e, ok := table.words[toks[i]]; ok && n == 0 {
			n, w = 1, e
		}
		if n > 0 {
			lx = append(lx, lexeme{w: w})
			i += n
			continue
		}
		l := lexeme{raw: toks[i]}
		if d, ok := parseDateNum(toks[i]); ok {
			l.num = d
		}
		lx = append(lx, l)
		i++
	}
	return lx
}

// dateTranslator resolves lexemes, in order, to days, one time of day and the words
// left over.
type dateTranslator struct {
	lx           []lexeme
	days, rest   []string
	hour, minute int
	haveHour     bool
	part, ampm   dayPart
	at           bool // the lexeme before was an at-word ("a las", "um")
	before       int  // minutes of a pending "halb" / "viertel vor"
	beforeSet    bool
}

// next is the next lexeme after k that is not dropped, and its index (-1: none).
func (t *dateTranslator) next(k int) (lexeme, int) {
	for j := k + 1; j < len(t.lx); j++ {
		if t.lx[j].w.kind != dateDrop {
			return t.lx[j], j
		}
	}
	return lexeme{}, -1
}

// take resolves lexeme k and returns the index of the last lexeme it used.
func (t *dateTranslator) take(k int) int {
	l := t.lx[k]
	wasAt := t.at
	t.at = false
	switch l.w.kind {
	case dateDay:
		t.days = append(t.days, l.w.en)
		if l.w.part != partNone {
			t.part = l.w.part
		}
	case datePart:
		t.part = l.w.part
	case dateMonth:
		t.days = append(t.days, l.w.en)
		if y, j := t.next(k); j >= 0 && y.num.year {
			t.days[len(t.days)-1] += " " + y.raw
			return j
		}
	case dateNext:
		if n := len(t.days); n > 0 && enWeekdays[t.days[n-1]] {
			t.days = append(t.days[:n-1], "next", t.days[n-1])
		} else {
			t.days = append(t.days, "next")
		}
	case dateAt:
		t.at = true
	case dateBefore:
		t.before, t.beforeSet = l.w.n, true
		t.at = wasAt
	case dateAMPM:
		t.ampm = l.w.part
	case dateClock:
		return t.clock(k, l)
	case dateNumber, 0:
		return t.number(k, l, wasAt)
	case dateDrop, dateUnit, dateMinutes:
	}
	return k
}

// clock takes a time-of-day word ("mediodía"), and minutes after it ("y media").
func (t *dateTranslator) clock(k int, l lexeme) int {
	if t.haveHour {
		return k
	}
	t.hour, t.minute, t.haveHour = l.w.n/60, l.w.n%60, true
	if m, j := t.next(k); j >= 0 && m.w.kind == dateMinutes {
		t.minute += m.w.n
		return j
	}
	return k
}

// number takes a number: a day of the month before a month, an hour (after an
// at-word or a "halb", before an hour unit, a.m./p.m., a part of the day or minutes,
// or written as a clock time), or a word left over.
func (t *dateTranslator) number(k int, l lexeme, wasAt bool) int {
	num := l.num
	if l.w.kind == dateNumber {
		num = dateNum{ok: true, h: l.w.n}
	}
	if !num.ok {
		t.rest = append(t.rest, l.raw)
		return k
	}
	after, j := t.next(k)
	if num.day && after.w.kind == dateMonth {
		t.days = append(t.days, fmt.Sprintf("%d", num.h))
		return k // the month follows
	}
	isHour := num.clock || wasAt || t.beforeSet ||
		after.w.kind == dateUnit || after.w.kind == dateAMPM || after.w.kind == datePart || after.w.kind == dateMinutes
	if !isHour || t.haveHour || num.h > 24 {
		if l.raw != "" {
			t.rest = append(t.rest, l.raw)
		}
		return k
	}
	t.hour, t.minute, t.haveHour = num.h, num.m, true
	if num.ampm != partNone {
		t.ampm = num.ampm
	}
	if after.w.kind == dateUnit {
		k = j
		if m, j2 := t.next(k); j2 >= 0 && m.num.ok && m.num.bare && m.num.h < 60 {
			t.minute, k = m.num.h, j2
		}
		after, j = t.next(k)
	}
	if after.w.kind == dateMinutes {
		t.minute += after.w.n
		k = j
	}
	if t.beforeSet {
		t.minute += t.before
		t.beforeSet = false
	}
	t.normalise()
	return k
}

// normalise carries minutes out of [0, 60) into the hour, on a 24-hour clock.
func (t *dateTranslator) normalise() {
	for t.minute < 0 {
		t.minute += 60
		t.hour = (t.hour + 23) % 24
	}
	for t.minute >= 60 {
		t.minute -= 60
		t.hour = (t.hour + 1) % 24
	}
}

// english writes the result: the days, then the time ("at 15:00") or the part of the
// day, then the words it did not know.
func (t *dateTranslator) english() string {
	out := t.days
	switch {
	case t.haveHour:
		out = append(out, fmt.Sprintf("at %d:%02d", halfOfDay(t.hour, t.ampm, t.part), t.minute))
	case t.part != partNone:
		out = append(out, partWords[t.part])
	}
	return strings.Join(append(out, t.rest...), " ")
}

// halfOfDay returns the 24-hour clock hour of h said with ampm ("3pm") or in a part of
// the day ("3 de la tarde": 15; "2 de la noche": 2; "1 del mediodía": 13).
func halfOfDay(h int, ampm, part dayPart) int {
	if ampm == partNone {
		ampm = part
	}
	switch ampm {
	case partAM:
		if h == 12 {
			return 0
		}
	case partPM, partAfternoon, partEvening:
		if h < 12 {
			return h + 12
		}
	case partNight:
		if h >= 6 && h < 12 {
			return h + 12
		}
	case partNoon:
		if h < 6 {
			return h + 12
		}
	}
	return h
}

// enWeekdays are the English weekdays the tables emit.
var enWeekdays = map[string]bool{"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true}

// dateNum is a word of digits read as a number of a date.
type dateNum struct {
	ok    bool
	h, m  int     // the number (an hour or a day) and minutes
	clock bool    // a time by its form: "15:00", "15h", "15h30", "3pm", "15uhr"
	bare  bool    // digits only
	day   bool    // may be a day of the month: digits, or "1er", "1o"
	year  bool    // four digits
	ampm  dayPart // "3pm", "3am"
}

// parseDateNum reads a word of digits: "15", "15:00", "15.30", "15h", "15h30", "3pm",
// "3:30pm", "15uhr", "1er", "2026". "15.30" is a time only where an hour may stand (it
// may be a date: "5.10").
func parseDateNum(w string) (dateNum, bool) {
	i := 0
	for i < len(w) && i < 4 && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	if i == 0 {
		return dateNum{}, false
	}
	n := 0
	for _, c := range w[:i] {
		n = n*10 + int(c-'0')
	}
	d := dateNum{ok: true, h: n}
	rest := w[i:]
	if i == 4 {
		d.year = rest == ""
		d.ok = false
		return d, d.year
	}
	if i > 2 {
		return dateNum{}, false
	}
	if rest == "" {
		d.bare, d.day = true, true
		return d, true
	}
	switch rest {
	case "er", "re", "o", "ro", "a", "eme": // "1º", "1ª" come NFKC-normalised: "1o", "1a"
		d.day = true
		return d, true
	}
	if len(rest) >= 3 && (rest[0] == ':' || rest[0] == '.' || rest[0] == 'h') && isDigits(rest[1:3]) {
		d.m = int(rest[1]-'0')*10 + int(rest[2]-'0')
		d.clock = rest[0] != '.'
		rest = rest[3:]
		if d.m > 59 {
			return dateNum{}, false
		}
	}
	switch rest {
	case "":
	case "am":
		d.clock, d.ampm = true, partAM
	case "pm":
		d.clock, d.ampm = true, partPM
	case "h", "hs", "hrs", "uhr":
		d.clock = true
	default:
		return dateNum{}, false
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dateTokens splits text into folded words (lower case, accents dropped): runs of
// letters and digits, keeping ':', '.', '/' and '-' between two digits ("15:00",
// "5/10"); any other character separates (so "aujourd'hui" is "aujourd hui", "p.m." is
// "p m").
func dateTokens(text string) []string {
	var out []string
	var b strings.Builder
	rs := []rune(strings.ToLower(text))
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteString(fold(r))
			continue
		case (r == ':' || r == '.' || r == '/' || r == '-') && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]):
			b.WriteRune(r)
			continue
		}
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// fold drops the accent of a Latin letter ("ñ" -> "n", "ü" -> "u", "ß" -> "ss").
func fold(r rune) string {
	if r < 0x80 {
		return string(r)
	}
	if f, ok := folds[r]; ok {
		return f
	}
	return string(r)
}

var folds = func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe"}
	for base, rs := range map[string]string{"a": "áàâäãå", "e": "éèêë", "i": "íìîï", "o": "óòôöõ", "u": "úùûü", "n": "ñ", "c": "ç", "y": "ýÿ"} {
		for _, r := range rs {
			m[r] = base
		}
	}
	return m
}()

// datePhrases are the date tables by language, folded words to meaning. English words
// in them ("at", "pm") are for English wordings in a session of that language.
var datePhrases = map[string]*dateTable{
	"es": newDateTable(
		days("hoy", "today", "manana", "tomorrow", "pasado manana", "in 2 days",
			"lunes", "monday", "martes", "tuesday", "miercoles", "wednesday", "jueves", "thursday",
			"viernes", "friday", "sabado", "saturday", "domingo", "sunday"),
		months("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
			"octubre", "noviembre", "diciembre"),
		map[string]dateWord{
			"setiembre":    {kind: dateMonth, en: "september"},
			"esta manana":  {kind: dateDay, en: "today", part: partMorning},
			"esta tarde":   {kind: dateDay, en: "today", part: partAfternoon},
			"esta noche":   {kind: dateDay, en: "today", part: partNight},
			"de la manana": {kind: datePart, part: partMorning}, "por la manana": {kind: datePart, part: partMorning},
			"en la manana": {kind: datePart, part: partMorning},
			"de la tarde":  {kind: datePart, part: partAfternoon}, "por la tarde": {kind: datePart, part: partAfternoon},
			"en la tarde": {kind: datePart, part: partAfternoon},
			"de la noche": {kind: datePart, part: partNight}, "por la noche": {kind: datePart, part: partNight},
			"en la noche":  {kind: datePart, part: partNight},
			"del mediodia": {kind: datePart, part: partNoon},
			"mediodia":     {kind: dateClock, n: 12 * 60}, "medianoche": {kind: dateClock, n: 0},
			"proximo": {kind: dateNext}, "proxima": {kind: dateNext}, "que viene": {kind: dateNext}, "siguiente": {kind: dateNext},
			"a las": {kind: dateAt}, "a la": {kind: dateAt}, "sobre las": {kind: dateAt}, "hacia las": {kind: dateAt},
			"para las": {kind: dateAt}, "sobre la": {kind: dateAt},
			"h": {kind: dateUnit}, "horas": {kind: dateUnit}, "hora": {kind: dateUnit}, "hrs": {kind: dateUnit}, "hs": {kind: dateUnit},
			"y media": {kind: dateMinutes, n: 30}, "y cuarto": {kind: dateMinutes, n: 15}, "menos cuarto": {kind: dateMinutes, n: -15},
			"primero": {kind: dateNumber, n: 1},
			"am":      {kind: dateAMPM, part: partAM},
		},
		numbers("una", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once", "doce",
			"trece", "catorce", "quince", "dieciseis", "diecisiete", "dieciocho", "diecinueve", "veinte",
			"veintiuna", "veintidos", "veintitres"),
		map[string]dateWord{"uno": {kind: dateNumber, n: 1}, "veintiuno": {kind: dateNumber, n: 21}},
		drop("a", "al", "el", "la", "las", "los", "de", "del", "en", "para", "por", "y", "o", "por favor"),
		dateCommon,
	),
	"fr": newDateTable(
		days("aujourd hui", "today", "demain", "tomorrow", "apres demain", "in 2 days",
			"lundi", "monday", "mardi", "tuesday", "mercredi", "wednesday", "jeudi", "thursday",
			"vendredi", "friday", "samedi", "saturday", "dimanche", "sunday"),
		months("janvier", "fevrier", "mars", "avril", "mai", "juin", "juillet", "aout", "septembre",
			"octobre", "novembre", "decembre"),
		map[string]dateWord{
			"ce matin":       {kind: dateDay, en: "today", part: partMorning},
			"cet apres midi": {kind: dateDay, en: "today", part: partAfternoon},
			"ce soir":        {kind: dateDay, en: "today", part: partEvening},
			"cette nuit":     {kind: dateDay, en: "today", part: partNight},
			"matin":          {kind: datePart, part: partMorning}, "du matin": {kind: datePart, part: partMorning},
			"apres midi": {kind: datePart, part: partAfternoon}, "de l apres midi": {kind: datePart, part: partAfternoon},
			"l apres midi": {kind: datePart, part: partAfternoon},
			"soir":         {kind: datePart, part: partEvening}, "du soir": {kind: datePart, part: partEvening},
			"de la nuit": {kind: datePart, part: partNight},
			"midi":       {kind: dateClock, n: 12 * 60}, "minuit": {kind: dateClock, n: 0},
			"prochain": {kind: dateNext}, "prochaine": {kind: dateNext},
			"a": {kind: dateAt}, "vers": {kind: dateAt}, "pour": {kind: dateAt},
			"h": {kind: dateUnit}, "heures": {kind: dateUnit}, "heure": {kind: dateUnit},
			"et demie": {kind: dateMinutes, n: 30}, "et demi": {kind: dateMinutes, n: 30},
			"et quart": {kind: dateMinutes, n: 15}, "moins le quart": {kind: dateMinutes, n: -15},
			"moins quart": {kind: dateMinutes, n: -15},
			"am":          {kind: dateAMPM, part: partAM},
		},
		numbers("une", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
			"treize", "quatorze", "quinze", "seize", "dix sept", "dix huit", "dix neuf", "vingt",
			"vingt et une", "vingt deux", "vingt trois"),
		map[string]dateWord{"un": {kind: dateNumber, n: 1}, "vingt et un": {kind: dateNumber, n: 21}},
		drop("le", "la", "les", "l", "de", "du", "des", "d", "en", "ce", "cet", "cette", "et", "s il vous plait", "s il te plait", "svp"),
		dateCommon,
	),
	"de": newDateTable(
		days("heute", "today", "morgen", "tomorrow", "ubermorgen", "in 2 days", "uebermorgen", "in 2 days",
			"montag", "monday", "dienstag", "tuesday", "mittwoch", "wednesday", "donnerstag", "thursday",
			"freitag", "friday", "samstag", "saturday", "sonnabend", "saturday", "sonntag", "sunday"),
		months("januar", "februar", "marz", "april", "mai", "juni", "juli", "august", "september",
			"oktober", "november", "dezember"),
		map[string]dateWord{
			"maerz": {kind: dateMonth, en: "march"}, "janner": {kind: dateMonth, en: "january"},
			"heute morgen":     {kind: dateDay, en: "today", part: partMorning},
			"heute fruh":       {kind: dateDay, en: "today", part: partMorning},
			"heute vormittag":  {kind: dateDay, en: "today", part: partMorning},
			"heute nachmittag": {kind: dateDay, en: "today", part: partAfternoon},
			"heute abend":      {kind: dateDay, en: "today", part: partEvening},
			"heute nacht":      {kind: dateDay, en: "today", part: partNight},
			"morgen fruh":      {kind: dateDay, en: "tomorrow", part: partMorning},
			"morgen frueh":     {kind: dateDay, en: "tomorrow", part: partMorning},
			"am morgen":        {kind: datePart, part: partMorning}, "morgens": {kind: datePart, part: partMorning},
			"fruh": {kind: datePart, part: partMorning}, "frueh": {kind: datePart, part: partMorning},
			"vormittag": {kind: datePart, part: partMorning}, "vormittags": {kind: datePart, part: partMorning},
			"mittags":    {kind: datePart, part: partNoon},
			"nachmittag": {kind: datePart, part: partAfternoon}, "nachmittags": {kind: datePart, part: partAfternoon},
			"abend": {kind: datePart, part: partEvening}, "abends": {kind: datePart, part: partEvening},
			"nacht": {kind: datePart, part: partNight}, "nachts": {kind: datePart, part: partNight},
			"mittag": {kind: dateClock, n: 12 * 60}, "mitternacht": {kind: dateClock, n: 0},
			"nachsten": {kind: dateNext}, "nachste": {kind: dateNext}, "naechsten": {kind: dateNext},
			"kommenden": {kind: dateNext}, "kommende": {kind: dateNext},
			"um": {kind: dateAt}, "gegen": {kind: dateAt}, "ab": {kind: dateAt},
			"uhr": {kind: dateUnit}, "h": {kind: dateUnit},
			"halb": {kind: dateBefore, n: -30}, "viertel vor": {kind: dateBefore, n: -15}, "viertel nach": {kind: dateBefore, n: 15},
		},
		numbers("eins", "zwei", "drei", "vier", "funf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwolf",
			"dreizehn", "vierzehn", "funfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn", "zwanzig",
			"einundzwanzig", "zweiundzwanzig", "dreiundzwanzig"),
		map[string]dateWord{"ein": {kind: dateNumber, n: 1}, "eine": {kind: dateNumber, n: 1},
			"fuenf": {kind: dateNumber, n: 5}, "zwoelf": {kind: dateNumber, n: 12}, "fuenfzehn": {kind: dateNumber, n: 15}},
		drop("am", "an", "den", "der", "dem", "die", "das", "fur", "fuer", "zum", "zur", "im", "und", "ca", "bitte"),
		dateCommon,
	),
}

// The English words of every table: an English wording in a session of another
// language keeps its hour ("tomorrow at 3 p.m.").
var dateCommon = map[string]dateWord{
	"at": {kind: dateAt}, "p m": {kind: dateAMPM, part: partPM}, "a m": {kind: dateAMPM, part: partAM},
	"pm": {kind: dateAMPM, part: partPM},
}

// newDateTable merges the parts of a table: a later part's entry replaces an earlier
// one's, except that a dropped word never replaces a meaning.
func newDateTable(parts ...map[string]dateWord) *dateTable {
	t := &dateTable{words: map[string]dateWord{}, longest: map[string]int{}}
	for _, p := range parts {
		for k, v := range p {
			if _, ok := t.words[k]; !ok || v.kind != dateDrop {
				t.words[k] = v
			}
			ws := strings.Fields(k)
			t.longest[ws[0]] = max(t.longest[ws[0]], len(ws))
		}
	}
	return t
}

func days(pairs ...string) map[string]dateWord {
	m := map[string]dateWord{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = dateWord{kind: dateDay, en: pairs[i+1]}
	}
	return m
}

var enMonths = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

func months(names ...string) map[string]dateWord {
	m := map[string]dateWord{}
	for i, n := range names {
		m[n] = dateWord{kind: dateMonth, en: enMonths[i]}
	}
	return m
}

func numbers(words ...string) map[string]dateWord {
	m := map[string]dateWord{}
	for i, w := range words {
		m[w] = dateWord{kind: dateNumber, n: i + 1}
	}
	return m
}

func drop(words ...string) map[string]dateWord {
	m := map[string]dateWord{}
	for _, w := range words {
		m[w] = dateWord{kind: dateDrop}
	}
	return m
}
