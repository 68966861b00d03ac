package policyfile

import (
	"maps"
	"slices"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Document returns p written in the tool-policy file format as a JSON-shaped value
// (maps, slices, strings, booleans and float64 numbers): encoded as JSON, or as YAML,
// it is a policy file that Parse reads back to the same policy. Every field of p is
// written as Validate left it (the defaults' timings in full, the stop phrases when
// set), tools by name. p must have passed Validate.
func Document(p *arbiter.Policy) map[string]any {
	defaults := timingsDoc(p.Defaults)
	if p.RejectUnknown {
		defaults["unknown_tools"] = "reject"
	}
	doc := map[string]any{"defaults": defaults}
	tools := []any{}
	for _, name := range slices.Sorted(maps.Keys(p.Tools)) {
		tools = append(tools, toolDoc(p.Tools[name]))
	}
	doc["tools"] = tools
	if p.StopPhrases != nil {
		doc["stop_phrases"] = list(p.StopPhrases)
	}
	if p.AmendPhrases != nil {
		doc["amend_phrases"] = list(p.AmendPhrases)
	}
	if ai := p.AgentIntent; ai != (speech.FusePolicy{}) {
		m := map[string]any{}
		if ai.Mode != "" {
			m["use"] = string(ai.Mode)
		}
		if ai.MinConfidence != 0 {
			m["min_confidence"] = ai.MinConfidence
		}
		doc["agent_intent"] = m
	}
	if p.Languages != nil {
		langs := map[string]any{}
		for lang, ph := range p.Languages {
			langs[lang] = phrasesDoc(ph)
		}
		doc["languages"] = langs
	}
	return doc
}

// timingsDoc writes the timings that are set (a zero field is left out: the default,
// or inherited).
func timingsDoc(t arbiter.Timings) map[string]any {
	m := map[string]any{}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"grace", t.Grace}, {"transcript_timeout", t.TranscriptTimeout}, {"dedupe_window", t.DedupeWindow},
		{"trigger_lookback", t.TriggerLookback}, {"abandon_wait", t.AbandonWait}, {"max_pending", t.MaxPending},
		{"run_timeout", t.RunTimeout}, {"max_hold", t.MaxHold}, {"continuation_wait", t.ContinuationWait}} {
		if d.v != 0 {
			m[d.key] = d.v.String()
		}
	}
	if t.OnTranscriptTimeout != "" {
		m["on_transcript_timeout"] = string(t.OnTranscriptTimeout)
	}
	if t.OnAbandon != "" {
		m["on_abandon"] = string(t.OnAbandon)
	}
	if t.OnUnclear != "" {
		m["on_unclear"] = string(t.OnUnclear)
	}
	return m
}

func toolDoc(t *arbiter.Tool) map[string]any {
	m := timingsDoc(t.Timings)
	m["name"] = t.Name
	set := func(key string, on bool, v any) {
		if on {
			m[key] = v
		}
	}
	set("side_effect", t.SideEffect, true)
	set("behavior", t.Behavior != "", string(t.Behavior))
	set("describe", t.Describe != "", t.Describe)
	// nil: derived from the name and describe (left out); empty: none ([]).
	set("claims", t.Claims != nil, list(t.Claims))
	set("allowed", t.Disallowed, false)
	set("hold", t.NoHold, false)
	set("dedupe_until_user_speaks", t.DedupeWindowOnly, false)
	set("confirm", t.Confirm, true)
	set("confirm_tool", t.ConfirmTool != "", t.ConfirmTool)
	set("max_asks", t.MaxAsks != 0, float64(t.MaxAsks))
	set("continuation", t.Continuation != "", t.Continuation == arbiter.ContinuationReplace)
	if len(t.Key) > 0 {
		var key []any
		for _, k := range t.Key {
			km := map[string]any{"arg": k.Arg}
			if k.As != "" {
				km["as"] = string(k.As)
			}
			if k.Optional {
				km["optional"] = true
			}
			key = append(key, km)
		}
		m["key"] = key
	}
	if len(t.Steps) > 0 {
		var steps []any
		for _, st := range t.Steps {
			sm := map[string]any{"arg": st.Arg, "ask": st.Ask}
			if st.WithPrevious {
				sm["with_previous"] = true
			}
			steps = append(steps, sm)
		}
		m["steps"] = steps
	}
	return m
}

func phrasesDoc(ph speech.Phrases) map[string]any {
	m := map[string]any{}
	for _, l := range []struct {
		key  string
		list []string
	}{{"stop", ph.Stop}, {"soft", ph.Soft}, {"amend", ph.Amend}, {"weak_amend", ph.WeakAmend},
		{"not_stop", ph.NotStop}, {"correct", ph.Correct}, {"bare", ph.Bare}, {"refuse", ph.Refuse},
		{"go_ahead", ph.GoAhead}, {"neutral", ph.Neutral}, {"hedge", ph.Hedge}, {"else_cues", ph.ElseCues},
		{"action_cues", ph.ActionCues}, {"undo_cues", ph.UndoCues}} {
		if l.list != nil {
			m[l.key] = list(l.list)
		}
	}
	return m
}

func list(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
