package speech

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize puts text into the one form that intent matching (Words, Classify) and
// business keys (package arbiter) read: Unicode format characters (category Cf: zero-
// width space U+200B, zero-width non-joiner and joiner U+200C/D, word joiner U+2060,
// byte-order mark U+FEFF, soft hyphen U+00AD, the bidi marks and embeddings U+200E/F,
// U+202A-E, U+2066-9) are dropped, then the rest is put in Unicode NFKC, which also
// folds the compatibility forms a transcriber or a model may emit: a no-break space
// U+00A0 or a narrow one U+202F is a space, fullwidth digits and letters ("３ｐｍ")
// are ASCII, "ﬁ" is "fi", a decomposed "e\u0301" is "é". It does not fold case or
// touch white space, so it is a form of the same text, not a key of it.
//
// Why NFKC and not only NFC (issue 13, round 2): the same words arriving once with a
// no-break space or fullwidth digits and once without must be the same stop and the
// same business key; and a zero-width space inside "sto\u200bp" must not hide a stop.
//
// Normalize is pure, idempotent (Normalize(Normalize(s)) == Normalize(s)) and safe for
// concurrent use; it takes time linear in len(text). ASCII text is returned as is, with
// no allocation. A run of invalid UTF-8 bytes becomes one U+FFFD.
func Normalize(text string) string {
	if isASCII(text) {
		return text
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if strings.IndexFunc(text, isFormat) >= 0 {
		text = strings.Map(func(r rune) rune {
			if isFormat(r) {
				return -1
			}
			return r
		}, text)
	}
	s := norm.NFKC.String(text)
	if strings.IndexFunc(s, isFormat) >= 0 { // not known to happen; keeps Normalize idempotent
		return Normalize(s)
	}
	return s
}

// isFormat reports whether r is a Unicode format character (category Cf).
func isFormat(r rune) bool { return r >= 0xAD && unicode.Is(unicode.Cf, r) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
