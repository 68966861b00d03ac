package fakeprovider

import (
	"fmt"
	"strings"

	"github.com/voicearbiter/arbiter/internal/realtime"
	geminiwire "github.com/voicearbiter/arbiter/internal/realtime/gemini"
	openaiwire "github.com/voicearbiter/arbiter/internal/realtime/openai"
)

// What the model ends up holding: the checker judges the function responses and texts
// an agent put into the model's context, as that context stood (sent, deleted, sent
// again), not the count of sends. This file reads them from a session's client
// messages.

// wireItem is one thing the agent put into the model's context: a function response
// (callID set) or a text (a user turn, a user or system message item, or a
// status_note riding on a function response).
type wireItem struct {
	callID  string
	final   bool
	payload obj
	text    string
	via     string
	tMs     int64
	conn    int
}

// heldOp adds items to a context or removes them (by key, OpenAI's item id).
type heldOp struct {
	ctx    int
	key    string
	add    []wireItem // the items the key holds (an answer and its rider), or nil for a removal
	tMs    int64
	remove bool
}

// heldOps reads a session's client messages as operations on the model's contexts,
// in order. A context is what one model conversation holds: an OpenAI connection is a
// new conversation; a Gemini connection is one too, unless its setup resumes a
// session (sessionResumption.handle): that one goes on holding what the last held.
// Gemini has no way to remove anything; OpenAI's conversation.item.delete removes the
// item it names (an agent's own item: a function_call_output, a message), so a delete
// and a create of the same answer is a move, not a second answer.
func heldOps(s *sessionRecord) []heldOp {
	var ops []heldOp
	ctx := map[int]int{}       // conn -> its context
	var conns []int            // the session's connections, in order
	creates := map[int][]int{} // OpenAI, per conn: the ops of its client creates, in order
	echoes := map[int]int{}    // OpenAI, per conn: echoes of client creates seen
	n := 0
	for _, l := range s.lines {
		if _, known := ctx[l.Conn]; !known {
			ctx[l.Conn] = l.Conn
			conns = append(conns, l.Conn)
		}
		if l.Kind != KindClient && l.Kind != KindServer {
			continue
		}
		if s.proto == ProtoGemini {
			if l.Kind != KindClient {
				continue
			}
			m, err := geminiwire.ParseClient(l.Msg)
			if err != nil || (m.Obj == nil && !isObject(l.Msg)) {
				continue
			}
			if m.Kind == geminiwire.ClientSetup && m.Setup.Handle != "" && len(conns) > 1 {
				ctx[l.Conn] = ctx[conns[len(conns)-2]] // resumed: the same model context
			}
			n++
			ops = append(ops, heldOp{ctx: ctx[l.Conn], key: fmt.Sprintf("#%d", n), add: geminiItems(m, l.TMs, l.Conn), tMs: l.TMs})
			continue
		}
		c := ctx[l.Conn]
		if l.Kind == KindServer {
			// OpenAI: the echo of a client create (a reply, not a trace line's doing)
			// names the item the client created without an id.
			if l.Line != 0 {
				continue
			}
			ev, err := openaiwire.ParseServer(l.Msg)
			if err != nil || (ev.Type != openaiwire.ItemAdded && ev.Type != openaiwire.ItemCreated) {
				continue
			}
			k := echoes[l.Conn]
			echoes[l.Conn]++
			if k < len(creates[l.Conn]) {
				if op := &ops[creates[l.Conn][k]]; strings.HasPrefix(op.key, "#") && ev.Item != nil {
					op.key = ev.Item.ID
				}
			}
			continue
		}
		ev, err := openaiwire.ParseClient(l.Msg)
		if err != nil || (ev.Obj == nil && !isObject(l.Msg)) {
			continue
		}
		n++
		switch ev.Type {
		case openaiwire.ItemCreate:
			if ev.Item == nil {
				continue // no item: the server creates nothing
			}
			key := ev.Item.ID
			if key == "" {
				key = fmt.Sprintf("#%d", n)
			}
			creates[l.Conn] = append(creates[l.Conn], len(ops))
			ops = append(ops, heldOp{ctx: c, key: key, add: openaiItems(ev.Item, l.TMs, l.Conn), tMs: l.TMs})
		case openaiwire.ItemDelete:
			ops = append(ops, heldOp{ctx: c, key: ev.ItemID, tMs: l.TMs, remove: true})
		}
	}
	return ops
}

// isObject reports whether b is a JSON object (for a message the protocol packages
// passed by their quick test, without a decode).
func isObject(b []byte) bool {
	_, err := realtime.DecodeObject(b)
	return err == nil
}

// openaiItems reads a conversation.item.create's item: a function_call_output (its
// output read as the guard reads it, openaiwire.ReadOutput, and a status_note in it),
// or a user or system message's text.
func openaiItems(item *openaiwire.Item, t int64, conn int) []wireItem {
	switch item.Type {
	case openaiwire.FunctionCallOutputType:
		r := wireItem{callID: item.CallID, final: true, payload: openaiwire.ReadOutput(item.Output), via: "function_call_output", tMs: t, conn: conn}
		return withRider(r)
	case openaiwire.MessageType:
		if item.Role != "user" && item.Role != "system" {
			return []wireItem{{conn: conn}}
		}
		return []wireItem{{text: strings.Join(item.Texts, " "), via: "conversation.item", tMs: t, conn: conn}}
	}
	return []wireItem{{conn: conn}} // another item: held, judged by nothing
}

// geminiItems reads a client message's toolResponse.functionResponses (final unless
// willContinue; a status_note riding in the response), clientContent user turns (one
// text per turn) and realtimeInput.text.
func geminiItems(m geminiwire.ClientMessage, t int64, conn int) []wireItem {
	var out []wireItem
	for _, fr := range m.Responses {
		r := wireItem{callID: fr.ID, final: !fr.WillContinue, payload: fr.Response, via: "toolResponse", tMs: t, conn: conn}
		out = append(out, withRider(r)...)
	}
	for _, turn := range m.Turns {
		if turn.Role != "" && turn.Role != "user" {
			continue
		}
		if len(turn.Texts) > 0 {
			out = append(out, wireItem{text: strings.Join(turn.Texts, " "), via: "clientContent", tMs: t, conn: conn})
		}
	}
	if m.RealtimeText != "" {
		out = append(out, wireItem{text: m.RealtimeText, via: "realtimeInput.text", tMs: t, conn: conn})
	}
	if len(out) == 0 {
		out = []wireItem{{conn: conn}}
	}
	return out
}

// withRider is a function response and, when its payload carries a status_note, the
// note as a text held with it.
func withRider(r wireItem) []wireItem {
	out := []wireItem{r}
	if n, ok := r.payload["status_note"].(string); ok && n != "" {
		out = append(out, wireItem{text: n, via: "status_note", tMs: r.tMs, conn: r.conn})
	}
	return out
}

// heldCount follows one quantity (the answers for a call id, or the copies of a note)
// through a session's operations, per context: how many the context held at most at
// once, how many at its end, and the items that made the count.
type heldCount struct {
	max, end int
	adds     []wireItem // each item added (with multiplicity), in order
}

// countHeld replays ops, counting in each context what weigh says each item is worth
// (1 for an answer to the id, the number of copies of a note in a text, 0 for the
// rest). Removing a key removes what its items were worth.
func countHeld(ops []heldOp, weigh func(wireItem) int) (map[int]*heldCount, []int) {
	counts := map[int]*heldCount{}
	var order []int
	byKey := map[string][]wireItem{} // ctx/key -> the items it holds now
	cur := map[int]int{}
	for _, op := range ops {
		hc := counts[op.ctx]
		k := fmt.Sprintf("%d/%s", op.ctx, op.key)
		if op.remove {
			for _, it := range byKey[k] {
				cur[op.ctx] -= weigh(it)
			}
			delete(byKey, k)
			if hc != nil {
				hc.end = cur[op.ctx]
			}
			continue
		}
		w := 0
		for _, it := range op.add {
			if x := weigh(it); x > 0 {
				w += x
				for i := 0; i < x; i++ {
					if hc == nil {
						hc = &heldCount{}
						counts[op.ctx] = hc
						order = append(order, op.ctx)
					}
					hc.adds = append(hc.adds, it)
				}
			}
		}
		byKey[k] = append(byKey[k], op.add...)
		if w == 0 {
			continue
		}
		cur[op.ctx] += w
		hc.end = cur[op.ctx]
		if hc.end > hc.max {
			hc.max = hc.end
		}
	}
	return counts, order
}

// resumed says, for a message about context ctx, which later connections resumed it
// (Gemini session resumption): " (and connections 3, 4 that resumed it)", or "".
func resumed(ops []heldOp, ctx int) string {
	var conns []string
	seen := map[int]bool{ctx: true}
	for _, op := range ops {
		for _, it := range op.add {
			if op.ctx == ctx && !seen[it.conn] && it.conn != 0 {
				seen[it.conn] = true
				conns = append(conns, fmt.Sprint(it.conn))
			}
		}
	}
	if len(conns) == 0 {
		return ""
	}
	return fmt.Sprintf(" (and connection %s, which resumed it)", strings.Join(conns, ", "))
}
