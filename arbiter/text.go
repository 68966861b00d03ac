package arbiter

import (
	"strings"
	"unicode/utf8"
)

// validName reports whether s is 1-128 characters from [A-Za-z0-9_.:-]: the shape of
// session ids, call ids and tool names.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// checkText refuses text the arbiter would keep, echo or read that carries a control
// character or is not UTF-8 (issue 25: a NUL in a transcript was kept and echoed, and
// clients and logs cut the text there). Refused: every C0 control (U+0000-U+001F) but,
// when spaces is set, tab, line feed and carriage return, which are white space in
// free text (a transcript of several lines); DEL (U+007F); every C1 control
// (U+0080-U+009F). Unicode format characters (a zero-width space) are not controls:
// the intent reader and the key normaliser drop them. spaces is false for a field that
// names one thing on one line (business_key). Errors: Invalid naming field, with the
// character and its byte offset.
func checkText(field, s string, spaces bool) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return Fieldf(Invalid, field, "not valid UTF-8 at byte %d", i)
		case spaces && (r == '\t' || r == '\n' || r == '\r'):
		case isControl(r):
			return Fieldf(Invalid, field, "control character %U at byte %d: text may not carry control characters%s", r, i, textSpaces(spaces))
		}
	}
	return nil
}

func textSpaces(spaces bool) string {
	if spaces {
		return " (tab, line feed and carriage return are allowed)"
	}
	return ""
}

// isControl reports whether r is a C0 or C1 control character or DEL.
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// cleanText returns s with what checkText(_, s, true) refuses replaced: each control
// character other than tab, line feed and carriage return, and each byte that is not
// UTF-8, by U+FFFD. s itself when it has none (no copy). For text the arbiter must
// take whatever it holds (a Complete's error: the job's calls are answered with it).
func cleanText(s string) string {
	if checkText("", s, true) == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteRune(utf8.RuneError)
		case r == '\t' || r == '\n' || r == '\r' || !isControl(r):
			b.WriteRune(r)
		default:
			b.WriteRune(utf8.RuneError)
		}
	}
	return b.String()
}
