package speech

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Step 1 of the claim reader: normalise the input into words and boundaries.

// tok is a normalised word or a boundary, with its byte span in the input.
type tok struct {
	w          string // word; "" for a boundary
	kind       byte   // 'w' word, ',' comma, '.' sentence end, '?' question end
	start, end int
}

// tokens splits s into lower-cased words, contractions expanded, and boundaries. It
// reads each byte of s a bounded number of times.
func tokens(s string) []tok {
	return expandContractions(scanTokens(s))
}

// scanTokens splits s into words (scanWord) and boundaries (boundaryKind).
func scanTokens(s string) []tok {
	raw := make([]tok, 0, len(s)/4+1) // English averages about five bytes a word
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if wordRune(r) {
			end, w, abbrevEnd := scanWord(s, i)
			raw = append(raw, tok{w: w, kind: 'w', start: i, end: end})
			if abbrevEnd {
				raw = append(raw, tok{kind: '.', start: end, end: end})
			}
			i = end
			continue
		}
		if k := boundaryKind(s, i, r, n); k != 0 {
			raw = append(raw, tok{kind: k, start: i, end: i + n})
		}
		i += n
	}
	return raw
}

// boundaryKind returns the kind of boundary the rune r at s[i:i+n] is ('.', ',' or
// '?'), or 0 when it is none. A dash between spaces, or doubled, separates; a hyphen
// in a word does not.
func boundaryKind(s string, i int, r rune, n int) byte {
	switch r {
	case '.', '!', ';', ':', '…', '—', '–', '(', ')', '[', ']', '"', '“', '”':
		return '.'
	case '?', ',':
		return byte(r)
	case '-':
		prev, next := runeAt(s, i-1), runeAt(s, i+n)
		if next == '-' || unicode.IsSpace(prev) || unicode.IsSpace(next) || prev == 0 || next == 0 {
			return '.'
		}
	}
	return 0
}

func apostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == '‘' || r == 'ʼ' || r == '`' || r == '′'
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// runeAt decodes the rune at byte i of s; 0 outside s.
func runeAt(s string, i int) rune {
	if i < 0 || i >= len(s) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// scanWord reads the word starting at i: letters and digits, apostrophes inside a
// word, "3:00", "3.30", and dotted abbreviations ("p.m."). It returns the end, the
// lower-cased word with apostrophes normalised to ', and whether a dotted
// abbreviation's final period also ends a sentence (the next word is capitalised).
func scanWord(s string, i int) (int, string, bool) {
	if end, ok := scanPlainWord(s, i); ok {
		return end, s[i:end], false
	}
	var b strings.Builder
	j, seg, dotted := i, 0, false // seg: word runes since the last abbreviation dot
	var prev rune
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		next := runeAt(s, j+n)
		mark := innerMark(prev, r, next)
		switch {
		case wordRune(r):
			b.WriteRune(unicode.ToLower(r))
			seg++
		case mark != 0:
			b.WriteByte(mark)
		case r == '.' && abbrevDot(s, j+n, prev, next, seg, dotted):
			b.WriteByte('.')
			seg, dotted = 0, true
		default:
			return endWord(s, j, b.String(), dotted && seg <= 2)
		}
		prev = r
		j += n
	}
	return endWord(s, j, b.String(), dotted && seg <= 2)
}

// scanPlainWord reads the common case of scanWord without allocating: a word of ASCII
// lower-case letters and digits followed by the end of s or an ASCII character that
// neither continues nor changes it. ok is false for any other word.
func scanPlainWord(s string, i int) (end int, ok bool) {
	j := i
	for j < len(s) && ('a' <= s[j] && s[j] <= 'z' || '0' <= s[j] && s[j] <= '9') {
		j++
	}
	if j == len(s) {
		return j, true
	}
	c := s[j]
	if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' || c == '\'' || c == '`' || c == '.' || c == ':' {
		return 0, false
	}
	return j, true
}

// innerMark returns the character a mark between two word runes keeps in the word:
// ' for an apostrophe between letters ("wasn’t"), '.' or ':' between digits ("3.30",
// "3:00"); 0 when r ends the word.
func innerMark(prev, r, next rune) byte {
	switch {
	case apostrophe(r) && unicode.IsLetter(prev) && unicode.IsLetter(next):
		return '\''
	case (r == '.' || r == ':') && unicode.IsDigit(prev) && unicode.IsDigit(next):
		return byte(r)
	}
	return 0
}

// abbrevDot reports whether the period before s[after:] is inside a dotted
// abbreviation ("p.m.", "e.g."): between short letter segments, with another period
// one letter later or an earlier dot in the same word.
func abbrevDot(s string, after int, prev, next rune, seg int, dotted bool) bool {
	if !unicode.IsLetter(prev) || seg > 2 || !unicode.IsLetter(next) {
		return false
	}
	return dotted || runeAt(s, after+utf8.RuneLen(next)) == '.'
}

// endWord ends the word w at j. A dotted abbreviation (abbrev) takes its final period,
// which also ends a sentence when the next word is capitalised ("at 3 p.m. It was").
func endWord(s string, j int, w string, abbrev bool) (int, string, bool) {
	if !abbrev || runeAt(s, j) != '.' {
		return j, w, false
	}
	j++
	for k := j; k < len(s); {
		r, n := utf8.DecodeRuneInString(s[k:])
		if !unicode.IsSpace(r) {
			return j, w, unicode.IsUpper(r)
		}
		k += n
	}
	return j, w, false
}

// expandContractions replaces each contracted word by its expansion (expand).
func expandContractions(raw []tok) []tok {
	out := make([]tok, 0, len(raw)+len(raw)/4)
	for k, t := range raw {
		if t.kind != 'w' {
			out = append(out, t)
			continue
		}
		w := strings.Trim(t.w, "'")
		ws, ok := expand(w, nextWord(raw, k))
		if !ok {
			out = append(out, tok{w: w, kind: 'w', start: t.start, end: t.end})
			continue
		}
		for _, w := range ws {
			out = append(out, tok{w: w, kind: 'w', start: t.start, end: t.end})
		}
	}
	return out
}

// nextWord returns the word after raw[k] for expand: the first of the next three
// tokens that is not a skipped adverb ("I'd already booked"), "" at a boundary.
func nextWord(raw []tok, k int) string {
	for m := k + 1; m < len(raw) && m <= k+3; m++ {
		if raw[m].kind != 'w' {
			return ""
		}
		if !skipAdverbs[raw[m].w] {
			return raw[m].w
		}
	}
	return ""
}

var contractions = map[string][]string{
	"can't": {"can", "not"}, "cannot": {"can", "not"}, "cant": {"can", "not"},
	"won't": {"will", "not"}, "wont": {"will", "not"}, "shan't": {"shall", "not"},
	"ain't": {"is", "not"}, "let's": {"let", "us"}, "lets": {"let", "us"},
	"gonna": {"going", "to"}, "wanna": {"want", "to"}, "gotta": {"have", "to"},
	"lemme": {"let", "me"}, "dunno": {"do", "not", "know"},
	"dont": {"do", "not"}, "doesnt": {"does", "not"}, "didnt": {"did", "not"},
	"isnt": {"is", "not"}, "wasnt": {"was", "not"}, "arent": {"are", "not"},
	"werent": {"were", "not"}, "hasnt": {"has", "not"}, "havent": {"have", "not"},
	"hadnt": {"had", "not"}, "couldnt": {"could", "not"}, "wouldnt": {"would", "not"},
	"shouldnt": {"should", "not"}, "mustnt": {"must", "not"}, "neednt": {"need", "not"},
	"im": {"i", "am"}, "ive": {"i", "have"}, "youre": {"you", "are"},
	"youve": {"you", "have"}, "weve": {"we", "have"}, "thats": {"that", "is"},
	"theres": {"there", "is"}, "nothings": {"nothing", "is"},
}

// participles are past participles that can follow "'d" ("I'd booked": had).
var participles = set("made done been gone taken put set got sent paid")

// expand returns the expansion of a contraction ("wasn't" -> was not, "it's" -> it is,
// "I'd booked" -> I had booked; next is the following word, which decides "'d"); ok is
// false when w is not a contraction. The returned slice must not be modified.
func expand(w, next string) (words []string, ok bool) {
	if e, ok := contractions[w]; ok {
		return e, true
	}
	if base, ok := strings.CutSuffix(w, "n't"); ok && base != "" {
		return []string{base, "not"}, true
	}
	i := strings.LastIndexByte(w, '\'')
	if i <= 0 {
		return nil, false
	}
	base := w[:i]
	switch w[i+1:] {
	case "s":
		return []string{base, "is"}, true
	case "re":
		return []string{base, "are"}, true
	case "ve":
		return []string{base, "have"}, true
	case "m":
		return []string{base, "am"}, true
	case "ll":
		return []string{base, "will"}, true
	case "d":
		if strings.HasSuffix(next, "ed") || participles[next] {
			return []string{base, "had"}, true
		}
		return []string{base, "would"}, true
	}
	return nil, false
}
