package speech

import "strings"

// Words that are not the user's intent: the model's own voice coming back as input
// transcription (echo), and the words of the request itself (carried by the call's
// arguments). Both are found by runs of words, with hash sets, in time linear in the
// texts; steps, when not nil, counts the work done (a word looked at, a run hashed),
// which the property tests bound.

// echoRun is how many words in a row the user's transcript must share with the
// model's recent output to be its echo. Three: a user rarely repeats three of the
// model's words in a row unless agreeing to them, and a run of one or two is common
// ("hold on", "the booking"), so shorter runs are only "maybe echo" (Read, rule 2).
const echoRun = 3

// dropEcho returns text (normalised; words = Words(text)) without the words that
// repeat a run of echoRun or more words of echo (the model's recent output, read with
// Words), or that one such word is between two of (a word misheard), how many it
// dropped, and, for a text of fewer words than echoRun, whether they occur in echo in
// the same order (a possible echo, not dropped). A dropped word's span is replaced by a
// space, so the words around it stay apart and the punctuation stays.
func dropEcho(text string, words []string, echo string, steps *int) (rest string, dropped int, short bool) {
	said := Words(echo)
	count(steps, len(said))
	if len(said) == 0 {
		return text, 0, false
	}
	if len(words) < echoRun {
		return text, 0, occursIn(words, said, steps)
	}
	runs := make(map[string]struct{}, len(said))
	var key strings.Builder
	for i := 0; i+echoRun <= len(said); i++ {
		count(steps, 1)
		runs[runKey(&key, said[i:i+echoRun])] = struct{}{}
	}
	covered := make([]bool, len(words))
	for i := 0; i+echoRun <= len(words); i++ {
		count(steps, 1)
		if _, ok := runs[runKey(&key, words[i:i+echoRun])]; ok {
			for k := i; k < i+echoRun; k++ {
				if !covered[k] {
					covered[k] = true
					dropped++
				}
			}
		}
	}
	// One word between two echoed ones is echo misheard ("hold on while I look that for
	// you" for "book").
	for i := 1; i+1 < len(words); i++ {
		count(steps, 1)
		if !covered[i] && covered[i-1] && covered[i+1] {
			covered[i] = true
			dropped++
		}
	}
	if dropped == 0 {
		return text, 0, false
	}
	var b strings.Builder
	last := 0
	for i, sp := range wordSpans(text) {
		count(steps, 1)
		if covered[i] {
			b.WriteString(text[last:sp[0]])
			b.WriteByte(' ')
			last = sp[1]
		}
	}
	b.WriteString(text[last:])
	return b.String(), dropped, false
}

// runKey is the key of a run of words in a set of runs; b is scratch space.
func runKey(b *strings.Builder, run []string) string {
	b.Reset()
	for _, w := range run {
		b.WriteString(w)
		b.WriteByte(0)
	}
	return b.String()
}

// occursIn reports whether words (fewer than echoRun of them) occur in said in that
// order, one after another.
func occursIn(words, said []string, steps *int) bool {
	if len(words) == 0 {
		return false
	}
	for i := 0; i+len(words) <= len(said); i++ {
		count(steps, 1)
		if said[i] == words[0] && (len(words) == 1 || said[i+1] == words[1]) {
			return true
		}
	}
	return false
}

// maskCarried returns words with each word the request's own arguments carry (the
// texts of carried) replaced by "\x00", which no phrase matches; words itself when
// none is. A word is carried when it is part of a run of two or more words that
// follow each other in one argument too ("don't stop" of "Don't Stop Believin'"), or is
// the whole of a one-word argument ("Stop"). A run is checked by its pairs of words.
func maskCarried(words, carried []string, steps *int) []string {
	singles := map[string]bool{}
	pairs := map[string]bool{}
	var key strings.Builder
	for _, c := range carried {
		cw := Words(c)
		count(steps, len(cw))
		if len(cw) == 1 {
			singles[cw[0]] = true
		}
		for i := 0; i+1 < len(cw); i++ {
			pairs[runKey(&key, cw[i:i+2])] = true
		}
	}
	var out []string
	mark := func(i int) {
		if out == nil {
			out = append([]string(nil), words...)
		}
		out[i] = "\x00"
	}
	for i, w := range words {
		count(steps, 1)
		if singles[w] {
			mark(i)
		}
		if i+1 < len(words) && pairs[runKey(&key, words[i:i+2])] {
			mark(i)
			mark(i + 1)
		}
	}
	if out == nil {
		return words
	}
	return out
}

// count adds n to *steps when steps is not nil.
func count(steps *int, n int) {
	if steps != nil {
		*steps += n
	}
}
