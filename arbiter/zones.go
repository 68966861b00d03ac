package arbiter

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zone rules even where the machine has none (a scratch image)
)

// Dates as instants (issue 25, item 6). An `as: datetime` key of a date with a time of
// day is an instant: ISO 8601 date-times with an offset or `Z` are read as the instant
// they name, so "2026-11-05T09:30:00Z" and "2026-11-05T10:30:00+01:00" are one key
// (they were two text keys, and a re-issue in the other spelling booked the slot
// twice). Everything said without an offset (an ISO date-time without one, "tomorrow
// at 3pm", "demain à 15h") is a wall-clock time in the session's time zone
// (Configure.TimeZone, UTC when it has none), and relative dates ("tomorrow", "friday")
// count days in that zone from the session's start. A minute key is the instant in UTC
// ("2006-01-02T15:04", seconds and a fraction only when they are not zero); a day key
// is the calendar day in the session's zone ("2006-01-02"), which has no instant.

// MaxTimeZoneBytes bounds a time zone name (the longest IANA name is 32 bytes).
const MaxTimeZoneBytes = 64

// zones caches loaded time zones by name, so a zone loads once per process and its
// *time.Location is one value (the date memo keys on it). Safe for concurrent use.
var zones sync.Map // string -> *time.Location

// zoneOf returns the location of a session time zone name ("" and "UTC": UTC), or
// nil when it is not one. Zone rules come from the machine's tz database, or from
// Go's embedded copy (time/tzdata) when it has none; replicas that must agree on a
// key across a zone's rule change run the same image.
func zoneOf(name string) *time.Location {
	if name == "" || name == "UTC" {
		return time.UTC
	}
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location)
	}
	if !validZoneName(name) {
		return nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	zones.Store(name, l)
	return l
}

// validZoneName reports whether name has the shape of an IANA time zone name
// ("Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+5"): 1 to
// MaxTimeZoneBytes bytes from [A-Za-z0-9_+-/], no empty or dot element. "Local" (the
// machine's zone, which differs between replicas) is not one.
func validZoneName(name string) bool {
	if name == "" || len(name) > MaxTimeZoneBytes || name == "Local" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '+', c == '-', c == '/':
		default:
			return false
		}
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" {
			return false
		}
	}
	return true
}

// CheckTimeZone returns nil for "" (no zone given) or an IANA time zone name the
// arbiter knows ("Europe/Paris", "UTC"), and otherwise an Invalid error naming field.
func CheckTimeZone(field, name string) error {
	if name == "" || zoneOf(name) != nil {
		return nil
	}
	return Fieldf(Invalid, field, "%q is not an IANA time zone name (like Europe/Paris, America/New_York or UTC)", Clip(name))
}

// readISODate reads text (normalised: speech.Normalize) as an ISO 8601 calendar date
// or date-time in the extended format: "2026-11-05" (a day key), "2026-11-05T09:30",
// "2026-11-05 09:30:15.5" (a wall-clock time in loc), or either with an offset, "Z",
// "+01:00", "+0100" or "+01" (the instant it names). The `T` may be a space or a lower
// case `t`. A date or time out of range ("2026-02-30", "24:00", a 60th second, an
// offset over 14 hours, year 0, an instant outside years 1 to 9999 in UTC) is not
// one: ok is false, as for any other text. Pure.
func readISODate(text string, loc *time.Location) (key string, ok bool) {
	s := strings.TrimSpace(text)
	if len(s) < 10 || !digits(s[0:4]) || s[4] != '-' || !digits(s[5:7]) || s[7] != '-' || !digits(s[8:10]) {
		return "", false
	}
	y, mo, d := atoi(s[0:4]), atoi(s[5:7]), atoi(s[8:10])
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, time.Month(mo)) {
		return "", false
	}
	if len(s) == 10 {
		return s, true // a day: no instant
	}
	if s[10] != 'T' && s[10] != 't' && s[10] != ' ' {
		return "", false
	}
	s = s[11:]
	if len(s) < 5 || !digits(s[0:2]) || s[2] != ':' || !digits(s[3:5]) {
		return "", false
	}
	h, mi, sec, nsec := atoi(s[0:2]), atoi(s[3:5]), 0, 0
	s = s[5:]
	if len(s) >= 3 && s[0] == ':' && digits(s[1:3]) {
		sec, s = atoi(s[1:3]), s[3:]
		if len(s) >= 2 && (s[0] == '.' || s[0] == ',') && isDigit(s[1]) {
			n := 1
			for n < len(s) && isDigit(s[n]) {
				n++
			}
			frac := s[1:n]
			if len(frac) > 9 {
				frac = frac[:9]
			}
			nsec = atoi(frac + strings.Repeat("0", 9-len(frac)))
			s = s[n:]
		}
	}
	if h > 23 || mi > 59 || sec > 59 {
		return "", false
	}
	zone := loc
	switch {
	case s == "":
	case s == "Z" || s == "z":
		zone = time.UTC
	default:
		off, ok := readOffset(s)
		if !ok {
			return "", false
		}
		zone = time.FixedZone("", off)
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nsec, zone)
	if u := t.UTC().Year(); u < 1 || u > 9999 {
		return "", false // an offset took it out of the years a key can write
	}
	return instantKey(t), true
}

// readOffset reads "+01:00", "+0100" or "+01" (or with "-") as seconds east of UTC, at
// most 14 hours.
func readOffset(s string) (int, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') || !digits(s[1:3]) {
		return 0, false
	}
	h, m := atoi(s[1:3]), 0
	switch rest := s[3:]; {
	case rest == "":
	case len(rest) == 3 && rest[0] == ':' && digits(rest[1:]):
		m = atoi(rest[1:])
	case len(rest) == 2 && digits(rest):
		m = atoi(rest)
	default:
		return 0, false
	}
	if h > 14 || m > 59 || h == 14 && m > 0 {
		return 0, false
	}
	off := (h*60 + m) * 60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// instantKey is the key of an instant: its UTC minute, "2006-01-02T15:04", with
// seconds and a fraction only when they are not zero.
func instantKey(t time.Time) string {
	t = t.UTC()
	switch {
	case t.Nanosecond() != 0:
		return strings.TrimRight(t.Format("2006-01-02T15:04:05.000000000"), "0")
	case t.Second() != 0:
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04")
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// atoi reads digits (checked by the caller).
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
