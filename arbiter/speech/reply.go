package speech

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Replies (issue 25, pattern 1): whether a "No." refuses the pending action or
// answers another question cannot be read from its words alone, so a reply is read
// against the question it answers: the model's last one. Guessing either way loses (a
// cancel loses the booking, a commit books what the user refused); what the words and
// the question cannot settle is unclear, and the engine asks.

// Context is what an utterance is read against besides its words (Read). The zero
// Context reads the words alone.
type Context struct {
	// Said is what the model said last (its output transcription, the latest turn or
	// turns), which a reply answers: its last question, or its last sentence when it
	// asked none, is the reply's target. Empty: no target.
	Said string
	// Action is the pending action's vocabulary (the tool's: Tool.Vocabulary): its
	// verbs (past and base forms) and nouns in the model's question make it a question
	// about the action ("Shall I book it?"), as the language's ActionCues do.
	Action Vocabulary
	// Asked is set when the arbiter asked the user about the pending action itself and
	// the question is open: the reply's target is the action, whatever Said says.
	Asked bool
	// Carried are the call's own argument texts (each string value of its arguments):
	// their words in the utterance are the request, not intent about it (rule 3 of
	// Read). Empty for an utterance that did not trigger the call.
	Carried []string
	// Echo is what the model said within the last few seconds, when the utterance may
	// be its echo (it overlapped the model's speech): words of it may come back through
	// the user's microphone (rule 2 of Read). Empty: no echo is possible.
	Echo string
}

// replyKind is what decides a reply.
type replyKind uint8

const (
	replyNone    replyKind = iota
	replyRefusal           // a Refuse phrase: "no", "not now", "I'm good"
	replyAffirm            // a GoAhead phrase: "yes", "go ahead"
	replyHedge             // a Hedge phrase: "I'm not sure", "maybe"
	replyNeutral           // Neutral phrases only: "thanks", "that's all"
)

// head is the reply that opens an utterance: its first clauses, each made only of
// Refuse, GoAhead, Hedge and Neutral phrases.
type head struct {
	end             int // words[:end] are the head; 0: none
	refusal, affirm int // the word index of the last refusal, go-ahead; -1 for none
	refusalPhrase   string
	affirmPhrase    string
	hedgePhrase     string
	refusals        int  // how many refusal phrases
	repeated        bool // a refusal phrase follows the same one ("No, no.", "Nein nein")
	hedge, neutral  bool // a hedge, a neutral phrase is in it
}

// kind returns what decides the reply and the phrase that does: its last refusal or
// go-ahead; else, when the reply is the whole utterance (n words), a hedge, else its
// neutral words; replyNone when the utterance opens with no reply, or with only hedges
// and neutral words before other words ("Thanks, what's the weather?": the other words
// decide).
func (h head) kind(n int) (replyKind, string) {
	switch {
	case h.end == 0:
		return replyNone, ""
	case h.affirm > h.refusal:
		return replyAffirm, h.affirmPhrase
	case h.refusal >= 0:
		return replyRefusal, h.refusalPhrase
	case h.end < n:
		// hedges and neutral words, then other words: those decide ("I don't know,
		// what time is it?" asks; a short statement with a hedge is Read's rule 6)
	case h.hedge:
		return replyHedge, h.hedgePhrase
	default:
		return replyNeutral, ""
	}
	return replyNone, ""
}

// readHead finds the reply that opens an utterance (words and breaks as wordBreaks
// gives them): clause by clause from the start, each covered from left to right by
// the longest Refuse, GoAhead, Hedge or Neutral phrase at each word, until a clause
// that is not. It also returns, for each word that starts a clause, whether that
// clause and the rest of its sentence are all such reply clauses (replyFrom: "No,
// thanks." after other words ends like "No."). Linear in len(words).
func readHead(words []string, breaks []byte, p Phrases) (head, []bool) {
	h := head{refusal: -1, affirm: -1}
	lists := [...]struct {
		x    *phraseIndex
		kind replyKind
	}{{indexPhrases(p.Refuse), replyRefusal}, {indexPhrases(p.GoAhead), replyAffirm},
		{indexPhrases(p.Hedge), replyHedge}, {indexPhrases(p.Neutral), replyNeutral}}
	type clause struct {
		from, to int
		reply    bool
	}
	var clauses []clause
	opening := true // every clause so far is a reply clause: h grows
	for i := 0; i < len(words); {
		j := i + 1
		for j < len(words) && !clauseBreak(breaks[j]) {
			j++
		}
		c := h // the head with this clause, if it is a reply clause
		reply := true
		for k := i; k < j && reply; {
			n, text, kind := 0, "", replyNone
			for _, l := range lists {
				for _, p := range l.x.byFirst[words[k]] {
					if m := len(p.words); m > n && hasPrefix(words[k:j], p.words) {
						n, text, kind = m, p.text, l.kind
					}
				}
			}
			switch kind {
			case replyNone:
				reply = false
			case replyRefusal:
				c.repeated = c.repeated || (c.refusals > 0 && text == c.refusalPhrase)
				c.refusal, c.refusalPhrase = k, text
				c.refusals++
			case replyAffirm:
				c.affirm, c.affirmPhrase = k, text
			case replyHedge:
				c.hedge, c.hedgePhrase = true, text
			case replyNeutral:
				c.neutral = true
			}
			k += n
		}
		if opening = opening && reply; opening {
			c.end = j
			h = c
		}
		clauses = append(clauses, clause{i, j, reply})
		i = j
	}
	replyFrom := make([]bool, len(words)+1)
	for k := len(clauses) - 1; k >= 0; k-- {
		c := clauses[k]
		rest := c.to == len(words) || isEnd(breaks[c.to]) || replyFrom[c.to]
		replyFrom[c.from] = c.reply && rest
	}
	return h, replyFrom
}

// target is what the model's last question asks about.
type target uint8

const (
	targetNone      target = iota // no question or statement that says
	targetElse                    // something else: "Anything else?"
	targetAction                  // doing the pending action: "Shall I book it?"
	targetUndo                    // undoing it: "Should I cancel it?"
	targetAmbiguous               // both else and the action: "Shall I book it, or anything else?"
)

// readReply reads a reply of the given kind (decided by phrase; emphatic: a refusal
// alone, repeated or exclaimed) against its target (the table of Read's rule 5).
func readReply(kind replyKind, phrase string, emphatic bool, ctx Context, p Phrases) (Intent, string) {
	t := ctx.target(p)
	switch kind {
	case replyRefusal:
		switch {
		case t == targetAction:
			return IntentStop, phrase
		case t == targetUndo, t == targetElse && !emphatic:
			return IntentGoAhead, phrase
		}
		return IntentUnclear, phrase
	case replyAffirm:
		if t == targetUndo {
			return IntentStop, phrase
		}
		return IntentGoAhead, phrase
	case replyHedge:
		if t == targetElse {
			return IntentOther, ""
		}
		return IntentUnclear, phrase
	}
	switch t { // replyNeutral
	case targetElse:
		return IntentGoAhead, ""
	case targetAction, targetUndo:
		return IntentUnclear, ""
	}
	return IntentOther, ""
}

// target reads what the model's last question (lastQuestion of Said) asks about: the
// action when Asked; else by the cues in it: ElseCues for something else, UndoCues for
// undoing the action (a cue that is one of the action's own words, "cancel" for a tool
// that cancels orders, is the action), ActionCues or the action's verbs and nouns for
// doing it; both else and the action (or undoing it) is ambiguous.
func (ctx Context) target(p Phrases) target {
	if ctx.Asked {
		return targetAction
	}
	q := lastQuestion(ctx.Said)
	if q == "" {
		return targetNone
	}
	words := Words(q)
	action := marksOf(words, indexPhrases(p.ActionCues), nil)
	action = marksOf(words, indexPhrases(actionWords(ctx.Action)), action)
	undo, els, act := false, false, action != nil
	if anyFirst(words, indexPhrases(p.UndoCues)) {
		undo = lastOutsideAny(words, indexPhrases(p.UndoCues), action)
	}
	if anyFirst(words, indexPhrases(p.ElseCues)) {
		els = lastOutsideAny(words, indexPhrases(p.ElseCues), nil)
	}
	switch {
	case els && (undo || act):
		return targetAmbiguous
	case undo:
		return targetUndo
	case act:
		return targetAction
	case els:
		return targetElse
	}
	return targetNone
}

// lastOutsideAny reports whether a phrase of x occurs in words, beginning at a word
// that skip does not mark (nil: none).
func lastOutsideAny(words []string, x *phraseIndex, skip []bool) bool {
	at, _ := lastOutside(words, nil, x, skip)
	return at >= 0
}

// marksOf marks the words of every occurrence in words of a phrase of x, in marks (a
// new slice when nil and there is one); it returns marks.
func marksOf(words []string, x *phraseIndex, marks []bool) []bool {
	if !anyFirst(words, x) {
		return marks
	}
	for i := range words {
		for _, p := range x.byFirst[words[i]] {
			if hasPrefix(words[i:], p.words) {
				if marks == nil {
					marks = make([]bool, len(words))
				}
				for k := range p.words {
					marks[i+k] = true
				}
				break
			}
		}
	}
	return marks
}

// actionWords are the words of a vocabulary that name its side effect: its claim
// verbs, their base forms ("booked": "book") and its nouns.
func actionWords(v Vocabulary) []string {
	if len(v.Done) == 0 && len(v.Nouns) == 0 {
		return nil
	}
	out := make([]string, 0, 3*len(v.Done)+len(v.Nouns))
	for _, d := range v.Done {
		out = append(out, d)
		out = append(out, baseForms(strings.ToLower(d))...)
	}
	return append(out, v.Nouns...)
}

// lastQuestion returns the model's last question in said: the sentence that ends at
// its last question mark; when it has none, its last sentence. "" for no words. A
// period ends a sentence only before white space and a word that does not start lower
// case ("3 p.m. tomorrow?" is one sentence). Linear in len(said).
func lastQuestion(said string) string {
	s := Normalize(said)
	if i := strings.LastIndexByte(s, '?'); i >= 0 {
		return s[sentenceStart(s, i):i]
	}
	t := strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || endsSentence(r) })
	return t[sentenceStart(t, len(t)):]
}

// sentenceStart returns where the sentence that s[:i] ends in begins: after the last
// sentence end before i (see lastQuestion), else 0. One pass back from i.
func sentenceStart(s string, i int) int {
	var after, nextWord rune // the rune after s[:j], and the first one not white space
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		switch {
		case r == '\n' || r == '?' || r == '!' || r == ';' || r == '…' || r == '。':
			return j + n
		case r == '.' && unicode.IsSpace(after) && !unicode.IsLower(nextWord):
			return j + n
		}
		after = r
		if !unicode.IsSpace(r) {
			nextWord = r
		}
	}
	return 0
}
