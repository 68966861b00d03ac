package speech

// group is a claim verb's verb group: the words between the verb and its subject,
// words[from:to] (to is the verb), e.g. "have not" in "I have not booked". subj is the
// subject at from-1, "" when the group reaches the start of the clause.
type group struct {
	from, to int
	subj     string
}

// index answers questions about the verb group of any word of a clause in constant
// time. firstClaim asks at every word whether a claim verb stands there; scanning each
// verb group back to its subject made a clause with no subject ("went through went
// through ...") quadratic. Each slice has one entry per position i in
// [0, len(words)] and describes words[:i]; reset fills them in one pass.
type index struct {
	lx    *lexicon // the vocabulary the clause is read with
	words []string

	subjAt  []int // the last word before i that ends a verb group (kindEndsGroup), -1 for none
	plainAt []int // the last word before i that is neither a skipped adverb nor a negator, -1
	toAt    []int // the last "to" before i, -1
	negs    []int // how many negators words[:i] holds
	modals  []int // how many blocking modals words[:i] holds (every modal but a "can"/"could" followed by "not")
	canNots []int // how many "can not"/"could not" start in words[:i]

	buf []int // backing store of the slices above, reused by reset
}

// reset indexes words, reusing the index's memory.
func (x *index) reset(words []string) {
	n := len(words) + 1
	if cap(x.buf) < 6*n {
		x.buf = make([]int, 6*n)
	}
	b := x.buf[:6*n]
	x.words = words
	x.subjAt, x.plainAt, x.toAt = b[0:n], b[n:2*n], b[2*n:3*n]
	x.negs, x.modals, x.canNots = b[3*n:4*n], b[4*n:5*n], b[5*n:6*n]
	subj, plain, to, negs, mods, cans := -1, -1, -1, 0, 0, 0
	for i := 0; ; i++ {
		x.subjAt[i], x.plainAt[i], x.toAt[i] = subj, plain, to
		x.negs[i], x.modals[i], x.canNots[i] = negs, mods, cans
		if i == len(words) {
			return
		}
		k := x.lx.kinds[words[i]]
		if k&kindEndsGroup != 0 {
			subj = i
		}
		if k&(kindSkipAdverb|kindNegator) == 0 {
			plain = i
		}
		if k&kindTo != 0 {
			to = i
		}
		if k&kindNegator != 0 {
			negs++
		}
		canNot := k&kindAbility != 0 && i+1 < len(words) && words[i+1] == "not"
		if canNot {
			cans++
		}
		if k&kindModal != 0 && !canNot {
			mods++
		}
	}
}

// wordKind is what index.reset asks of a word, answered by one map look-up.
type wordKind uint8

const (
	// kindEndsGroup: a verb's group reaches back no further than this word: a
	// subject, an object pronoun, a noun of the vocabulary or a past form of a
	// claim verb.
	kindEndsGroup  wordKind = 1 << iota
	kindSkipAdverb          // in skipAdverbs
	kindNegator             // in negators
	kindModal               // in modals
	kindAbility             // in abilityWords ("can", "could")
	kindTo                  // "to"
)

// baseKinds are the kinds of the words every vocabulary shares; a lexicon adds its
// nouns and the past forms of its claim verbs (kindEndsGroup; lexicon.kinds).
var (
	baseKinds = func() map[string]wordKind {
		m := map[string]wordKind{"to": kindTo}
		for _, k := range []struct {
			kind  wordKind
			words wordSet
		}{{kindSkipAdverb, skipAdverbs}, {kindNegator, negators}, {kindModal, modals}, {kindAbility, abilityWords}} {
			for w := range k.words {
				m[w] |= k.kind
			}
		}
		for _, set := range []wordSet{subjects, objPronouns, otherNouns} {
			for w := range set {
				m[w] |= kindEndsGroup
			}
		}
		return m
	}()
)

// canNotAt reports whether "can not" or "could not" starts at word i.
func (x *index) canNotAt(i int) bool {
	return abilityWords[x.words[i]] && i+1 < len(x.words) && x.words[i+1] == "not"
}

// group returns the verb group of a verb at word i: back to the last word before it
// that ends a group (its subject), or to the start of the clause.
func (x *index) group(i int) group {
	j := x.subjAt[i]
	if j < 0 {
		return group{from: 0, to: i}
	}
	return group{from: j + 1, to: i, subj: x.words[j]}
}

// lastPlain returns the group's last word that is neither a skipped adverb nor a
// negator ("have" in "I have not yet booked"), "" for none.
func (x *index) lastPlain(g group) string {
	if p := x.plainAt[g.to]; p >= g.from {
		return x.words[p]
	}
	return ""
}

// lastTo returns the index of the group's last "to", -1 for none.
func (x *index) lastTo(g group) int {
	if t := x.toAt[g.to]; t >= g.from {
		return t
	}
	return -1
}

// negators returns how many negators the group holds.
func (x *index) negators(g group) int {
	return x.negs[g.to] - x.negs[g.from]
}

// blocks reports whether words[from:to] holds a modal that is not a negated ability:
// one counted in modals, or a "can"/"could" that ends the range (its "not" lies
// outside it).
func (x *index) blocks(from, to int) bool {
	if x.modals[to]-x.modals[from] > 0 {
		return true
	}
	return to > from && x.canNotAt(to-1)
}

// negatedAbility reports whether the group holds "can not" or "could not" with both
// words inside it.
func (x *index) negatedAbility(g group) bool {
	last := g.to - 1 // the last word at which a pair inside the group can start
	return last > g.from && x.canNots[last]-x.canNots[g.from] > 0
}
