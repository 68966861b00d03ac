package speech

import "unicode"

// Scripts written without spaces between words (issue 25, pattern 3). Chinese,
// Japanese, Thai, Lao, Khmer and Myanmar text puts no space between words, so a stop
// phrase matched as whole space-separated words was never found inside "请停下不要订了".
// The intent reader matches them character by character instead: each letter of such
// a script is a word of its own (with the combining marks after it: Thai "ยุ" is one),
// and a phrase of those scripts is the run of its letters, so "停下" is found in
// "请停下吧" and "หยุด" in "หยุดก่อน". A word of any other script beside them stays
// whole ("请stop吧" is 请, stop, 吧), so the English "stop" is found in any text.
//
// Why characters and not a segmenter: the segmenters that fit (gse for Chinese,
// kagome for Japanese) carry dictionaries of tens of megabytes and a Thai one is
// another; the engine takes small pure libraries only. Character matching needs no
// dictionary and takes time linear in the text, and its one weakness, a phrase found
// inside a longer word of other meaning ("停" inside "停车", parking; "หยุด" inside
// "วันหยุด", a holiday), is what the NotStop phrases of each language hold, and why the
// built-in phrases of these scripts are of two letters or more. A space between two
// letters of a Southeast Asian script of these (Thai, Lao, Khmer, Myanmar: their
// spelling puts one between phrases and sentences) ends a clause, as a comma does.

// unspaced reports whether r is a letter of a script written without spaces between
// words: Han, Hiragana, Katakana (with the prolonged sound mark ー), Thai, Lao, Khmer
// or Myanmar.
func unspaced(r rune) bool {
	if r < 0x0E00 { // every script below starts above U+0E00: Latin and the rest are quick
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao,
		unicode.Khmer, unicode.Myanmar) || r == 'ー'
}

// spacedClauses reports whether r is of a script whose spelling puts a space between
// phrases (Thai, Lao, Khmer, Myanmar): a space between two of its letters ends a clause.
func spacedClauses(r rune) bool {
	return r >= 0x0E00 && unicode.In(r, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// isMark reports whether r is a combining mark (Unicode category M): it belongs to the
// word of the letter before it.
func isMark(r rune) bool { return r >= 0x300 && unicode.Is(unicode.M, r) }

// isWordRune reports whether r is part of a word: a letter, a digit or a combining
// mark.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || isMark(r) }

// wordScanner splits normalised text into the words intent matching reads, one rune at
// a time: runs of letters, digits and combining marks, apostrophes inside them
// dropped, each letter of an unspaced script a word of its own (with its marks). It is
// the one definition Words and the break scan (scanBreaks) share, so they always see
// the same words.
type wordScanner struct {
	inWord   bool // the rune before was part of a word
	unspaced bool // the word being read is one letter of an unspaced script
	lastSEA  bool // the last letter read is of a script that spaces its clauses
	spaceSEA bool // white space came after such a letter, and nothing else since
}

// next reads rune r and reports whether it starts a new word (start), whether it is
// part of a word at all (in; an apostrophe is neither), and, for a new word, whether a
// space between two letters of a script that spaces its clauses came before it
// (clause).
func (w *wordScanner) next(r rune) (start, in, clause bool) {
	switch {
	case isApostrophe(r):
		return false, false, false
	case isMark(r):
		start = !w.inWord
		w.inWord = true
		if start {
			w.unspaced, w.spaceSEA = false, false
		}
		return start, true, false
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		u := unspaced(r)
		start = !w.inWord || u || w.unspaced
		sea := spacedClauses(r)
		if start {
			clause = w.spaceSEA && sea
			w.spaceSEA = false
		}
		w.inWord, w.unspaced, w.lastSEA = true, u, sea
		return start, true, clause
	}
	w.inWord, w.unspaced = false, false
	w.spaceSEA = w.lastSEA && unicode.IsSpace(r)
	return false, false, false
}
