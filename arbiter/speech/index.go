package speech

// group is a claim verb's verb group: the words between the verb and its subject,
// words[from:to] (to is the verb), e.g. "have not" in "I have not booked". subj is the
// subject at from-1, "" when the group reaches the start of the clause.
type group struct {
	from, to int
	subj     string
}

// index answers questions about the verb group of any word of a clause.
type index struct {
	words []string
}

// reset indexes words.
func (x *index) reset(words []string) {
	x.words = words
}

// group returns the verb group of a verb at word i: back to the last word before it
// that ends a group (its subject), or to the start of the clause.
func (x *index) group(i int) group {
	for j := i - 1; j >= 0; j-- {
		if endsGroup(x.words[j]) {
			return group{from: j + 1, to: i, subj: x.words[j]}
		}
	}
	return group{from: 0, to: i}
}

// lastPlain returns the group's last word that is neither a skipped adverb nor a
// negator ("have" in "I have not yet booked"), "" for none.
func (x *index) lastPlain(g group) string {
	for k := g.to - 1; k >= g.from; k-- {
		if w := x.words[k]; !skipAdverbs[w] && !negators[w] {
			return w
		}
	}
	return ""
}

// lastTo returns the index of the group's last "to", -1 for none.
func (x *index) lastTo(g group) int {
	for k := g.to - 1; k >= g.from; k-- {
		if x.words[k] == "to" {
			return k
		}
	}
	return -1
}

// negators returns how many negators the group holds.
func (x *index) negators(g group) int {
	n := 0
	for _, w := range x.words[g.from:g.to] {
		if negators[w] {
			n++
		}
	}
	return n
}

// blocks reports whether words[from:to] holds a modal that is not a negated ability
// ("can not", "could not" with both words inside the range).
func (x *index) blocks(from, to int) bool {
	for k := from; k < to; k++ {
		if !modals[x.words[k]] {
			continue
		}
		if abilityWords[x.words[k]] && k+1 < to && x.words[k+1] == "not" {
			continue
		}
		return true
	}
	return false
}

// negatedAbility reports whether the group holds "can not" or "could not" with both
// words inside it.
func (x *index) negatedAbility(g group) bool {
	for k := g.from; k+1 < g.to; k++ {
		if abilityWords[x.words[k]] && x.words[k+1] == "not" {
			return true
		}
	}
	return false
}
