package speech

// Step 2 of the claim reader: split the words into clauses.

// clause is a run of words between boundaries, with its byte span in the input.
type clause struct {
	words      []string // shared with the other clauses of the statement; capacity = length
	start, end int
	question   bool // the last clause of a sentence that ends in "?"
}

// clauses splits toks into clauses at commas, sentence ends and conjunctions (which
// are dropped; "so" is kept in "so that" and "so far"). All clauses share one slice of
// words.
func clauses(toks []tok) []clause {
	words := make([]string, 0, len(toks))
	var out []clause
	first := 0    // index in words of the current clause's first word
	start := 0    // byte offset of the current clause's first word
	sentence := 0 // index in out of the current sentence's first clause
	flush := func(end int) {
		if len(words) > first {
			out = append(out, clause{words: words[first:len(words):len(words)], start: start, end: end})
		}
		first = len(words)
	}
	end := 0 // byte offset of the end of the last word
	for k, t := range toks {
		switch {
		case t.kind == ',':
			flush(end)
		case t.kind == '.' || t.kind == '?':
			flush(end)
			if t.kind == '?' && len(out) > sentence {
				out[len(out)-1].question = true
			}
			sentence = len(out)
		case conjunctions[t.w] && !soThat(toks, k):
			flush(end)
		default:
			if len(words) == first {
				start = t.start
			}
			words = append(words, t.w)
			end = t.end
		}
	}
	flush(end)
	return out
}

// soThat reports whether toks[k] is the "so" of "so that" or "so far", which does not
// separate clauses.
func soThat(toks []tok, k int) bool {
	if toks[k].w != "so" || k+1 >= len(toks) {
		return false
	}
	next := toks[k+1].w
	return next == "that" || next == "far"
}
