package arbiter

import (
	"strings"
	"unicode"
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

// ValidName reports whether s is 1-128 characters from [A-Za-z0-9_.:-]: the shape of
// session ids, call ids and tool names.
func ValidName(s string) bool { return validName(s) }

// normalizeWords lower-cases s, drops apostrophes (straight and curly, so "don't",
// "don’t" and "dont" agree) and splits it into words of letters and digits.
func normalizeWords(s string) []string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ':
			// dropped: "don't" -> "dont"
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Fields(b.String())
}

// containsPhrase reports whether the word sequence phrase occurs in words on word
// boundaries.
func containsPhrase(words, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
outer:
	for i := 0; i+len(phrase) <= len(words); i++ {
		for j, p := range phrase {
			if words[i+j] != p {
				continue outer
			}
		}
		return true
	}
	return false
}

// StopIntent reports whether text contains one of phrases (word-boundary matched,
// case- and apostrophe-insensitive) and returns the phrase found.
func StopIntent(text string, phrases []string) (string, bool) {
	words := normalizeWords(text)
	for _, p := range phrases {
		if containsPhrase(words, normalizeWords(p)) {
			return p, true
		}
	}
	return "", false
}
