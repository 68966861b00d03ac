// Package policyfile reads the tool-policy file (the YAML format of "Tool policy file"
// in docs/trace-format.md) into an *arbiter.Policy.
//
// The reader is strict: an unknown field, a value of the wrong type, a duration without
// a unit, an unknown enum value or a duplicate tool is an error, never ignored. Every
// error is an *arbiter.Error of kind arbiter.Invalid whose message starts with the file
// name and, where there is one, the line: "booking.yaml:12: tools[0].key[0].as: "date"
// is not text, datetime, number or exact".
//
// Besides the fields of the spec, the file may carry top-level stop_phrases and
// amend_phrases lists (English; left out, the arbiter's defaults apply; an explicit
// empty list means none) and a languages mapping (per language: stop, soft, amend,
// weak_amend lists replacing the built-in set).
//
// The confirm-then-act fields of a tool are confirm (a boolean), confirm_tool (a tool
// name), max_asks (a whole number, 1 or more) and steps (a list of mappings with arg,
// ask and with_previous); run_timeout is a duration like max_pending, in defaults or
// per tool.
//
// A null value (a field with nothing after the colon, or "null") means the field was
// left out.
package policyfile

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
)

// Load reads the tool-policy file at path and returns its policy, validated
// (Policy.Validate has filled the defaults). Error messages name the file by path.
//
// Errors, all of kind arbiter.Invalid: the file cannot be read (the cause, such as
// fs.ErrNotExist, is wrapped), or any error Parse returns.
func Load(path string) (*arbiter.Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, arbiter.Wrap(arbiter.Invalid, err, "%s: cannot read the tool policy", path)
	}
	return Parse(data, path)
}

// Parse reads a tool-policy file from data and returns its policy, validated
// (Policy.Validate has filled the defaults). name is the file's name for error
// messages, such as its path. An empty document (or one of comments only) gives the
// default policy.
//
// Errors, all of kind arbiter.Invalid with a message "NAME:LINE: FIELD: PROBLEM": YAML
// syntax errors (including a mapping key given twice); more than one YAML document; an
// unknown field; a value of the wrong type (a string where a list belongs, a number
// where a duration belongs: durations need a unit, such as "1.5s"); a negative or zero
// duration (zero would mean "the default"); an enum value out of range (behavior,
// key[].as, on_transcript_timeout, on_abandon, unknown_tools); a tool without a name,
// two tools of one name (the message names both lines), a key arg listed twice; an
// explicit max_asks below 1, an empty confirm_tool, a step without an arg or an ask, a
// step arg listed twice, a confirm_tool (or the default, confirm_action, when left out)
// that is the name of a tool in the file; YAML tags, merge keys and undefined aliases;
// and anything Policy.Validate rejects, such as an invalid tool name, confirm_tool on a
// tool with neither confirm nor steps, a first step with with_previous or a stop phrase
// without words (reported on the line of the field at fault, else of the tool or
// phrase).
func Parse(data []byte, name string) (*arbiter.Policy, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	d := &decoder{name: name, anchors: map[string]ast.Node{}}
	var body ast.Node
	for _, doc := range f.Docs {
		if isNil(doc) || isNil(doc.Body) {
			continue
		}
		if body != nil {
			return nil, d.errorf(doc.Body, "a second YAML document: a tool policy is one document")
		}
		body = doc.Body
	}
	p, err := d.policy(body)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		// The parts were validated one by one above, with their lines; this is a
		// backstop for a check Validate gained since.
		return nil, arbiter.Errorf(arbiter.Invalid, "%s: %s", name, arbiter.MessageOf(err))
	}
	return p, nil
}

// syntaxError turns a go-yaml parse error into an Invalid error with the line.
func syntaxError(name string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return arbiter.Errorf(arbiter.Invalid, "%s:%d: %s", name, tk.Position.Line, ye.GetMessage())
		}
		return arbiter.Errorf(arbiter.Invalid, "%s: %s", name, ye.GetMessage())
	}
	return arbiter.Wrap(arbiter.Invalid, err, "%s: not valid YAML", name)
}

type decoder struct {
	name    string
	anchors map[string]ast.Node
}

// field is one entry of a mapping.
type field struct {
	key   string
	node  ast.Node // the key, for its line
	value ast.Node // resolved: no anchor or alias; nil for null
}

func (d *decoder) policy(body ast.Node) (*arbiter.Policy, error) {
	p := &arbiter.Policy{}
	fields, err := d.mapping(body, "")
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		switch f.key {
		case "defaults":
			if err := d.defaults(f, p); err != nil {
				return nil, err
			}
		case "tools":
			if err := d.tools(f, p); err != nil {
				return nil, err
			}
		case "stop_phrases":
			if p.StopPhrases, err = d.phrases(f, "stop_phrases"); err != nil {
				return nil, err
			}
		case "amend_phrases":
			if p.AmendPhrases, err = d.phrases(f, "amend_phrases"); err != nil {
				return nil, err
			}
		case "languages":
			if err := d.languages(f, p); err != nil {
				return nil, err
			}
		default:
			return nil, d.unknown(f, "")
		}
	}
	if p.Tools == nil {
		p.Tools = map[string]*arbiter.Tool{}
	}
	return p, nil
}

func (d *decoder) defaults(df field, p *arbiter.Policy) error {
	fields, err := d.mapping(df.value, "defaults")
	if err != nil {
		return err
	}
	for _, f := range fields {
		path := "defaults." + f.key
		if ok, err := d.timing(f, path, &p.Defaults); ok || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if f.key != "unknown_tools" {
			return d.unknown(f, "defaults")
		}
		s, set, err := d.enum(f, path, "pass", "reject")
		if err != nil {
			return err
		}
		p.RejectUnknown = set && s == "reject"
	}
	if err := (&arbiter.Policy{Defaults: p.Defaults, StopPhrases: []string{}}).Validate(); err != nil {
		return d.errorf(df.node, "%s", arbiter.MessageOf(err))
	}
	return nil
}

func (d *decoder) tools(tf field, p *arbiter.Policy) error {
	items, err := d.sequence(tf.value, "tools")
	if err != nil {
		return err
	}
	p.Tools = make(map[string]*arbiter.Tool, len(items))
	nameNode := make(map[string]ast.Node, len(items))
	decoded := make([]*arbiter.Tool, 0, len(items))
	nodes := make([]toolNodes, 0, len(items))
	for i, item := range items {
		path := fmt.Sprintf("tools[%d]", i)
		t, tn, err := d.tool(item, path)
		if err != nil {
			return err
		}
		at := tn.name
		if first, dup := nameNode[t.Name]; dup {
			return d.errorf(at, "%s.name: tool %q is defined twice, on lines %d and %d",
				path, t.Name, line(first), line(at))
		}
		nameNode[t.Name] = at
		c := *t
		if err := (&arbiter.Policy{Tools: map[string]*arbiter.Tool{c.Name: &c}, StopPhrases: []string{}}).Validate(); err != nil {
			msg := arbiter.MessageOf(err)
			return d.errorf(tn.at(msg, t.Name), "%s", msg)
		}
		p.Tools[t.Name] = t
		decoded = append(decoded, t)
		nodes = append(nodes, tn)
	}
	// A confirmation tool is answered by the arbiter, never executed: it must not be a
	// tool of the policy (Validate checks this too, but without the lines).
	for i, t := range decoded {
		if !t.Confirm && len(t.Steps) == 0 {
			continue
		}
		path := fmt.Sprintf("tools[%d].confirm_tool", i)
		if t.ConfirmTool == "" {
			if other, clash := nameNode[arbiter.DefaultConfirmTool]; clash {
				return d.errorf(nodes[i].name, "%s: left out, it is %q, which is the tool on line %d; "+
					"a confirmation tool must not be a tool of its own: set confirm_tool to another name",
					path, arbiter.DefaultConfirmTool, line(other))
			}
			continue
		}
		if other, clash := nameNode[t.ConfirmTool]; clash {
			return d.errorf(nodes[i].fields["confirm_tool"], "%s: %q is the tool on line %d; "+
				"a confirmation tool must not be a tool of its own", path, t.ConfirmTool, line(other))
		}
	}
	return nil
}

// toolNodes are the nodes of one decoded tool, for the lines of the errors found after
// decoding it.
type toolNodes struct {
	// name is the node of the tool's name (the entry itself when it has none).
	name ast.Node
	// fields holds the key node of each field, by its path below the tool: "confirm",
	// "steps", "steps[1]" (the item), "steps[1].arg".
	fields map[string]ast.Node
}

// at returns the node of the field an arbiter.Validate message about tool name is
// about ("tools[NAME].steps[1].arg: ..."), or the nearest enclosing field the file has;
// the name's node when there is none.
func (tn toolNodes) at(msg, name string) ast.Node {
	prefix := "tools[" + name + "]."
	if !strings.HasPrefix(msg, prefix) {
		return tn.name
	}
	p := msg[len(prefix):]
	if i := strings.IndexAny(p, ": "); i >= 0 {
		p = p[:i]
	}
	for p != "" {
		if n, ok := tn.fields[p]; ok && n != nil {
			return n
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return tn.name
}

// tool decodes one entry of tools, and returns the nodes of its fields (for lines).
func (d *decoder) tool(item field, path string) (*arbiter.Tool, toolNodes, error) {
	n := item.value
	tn := toolNodes{name: n, fields: map[string]ast.Node{}}
	if n == nil {
		return nil, tn, d.errorf(item.node, "%s: must be a mapping with a name, not null", path)
	}
	fields, err := d.mapping(n, path)
	if err != nil {
		return nil, tn, err
	}
	t := &arbiter.Tool{}
	for _, f := range fields {
		fpath := path + "." + f.key
		tn.fields[f.key] = f.node
		if ok, err := d.timing(f, fpath, &t.Timings); ok || err != nil {
			if err != nil {
				return nil, tn, err
			}
			continue
		}
		switch f.key {
		case "name":
			s, set, err := d.str(f, fpath)
			if err != nil {
				return nil, tn, err
			}
			if !set || s == "" {
				return nil, tn, d.errorf(f.node, "%s: required", fpath)
			}
			t.Name, tn.name = s, f.node
		case "confirm":
			if t.Confirm, _, err = d.boolean(f, fpath); err != nil {
				return nil, tn, err
			}
		case "confirm_tool":
			s, set, err := d.str(f, fpath)
			if err != nil {
				return nil, tn, err
			}
			if set && s == "" {
				return nil, tn, d.errorf(f.value, "%s: empty (leave the field out for the default, %s)",
					fpath, arbiter.DefaultConfirmTool)
			}
			t.ConfirmTool = s
		case "max_asks":
			if t.MaxAsks, err = d.maxAsks(f, fpath); err != nil {
				return nil, tn, err
			}
		case "steps":
			if t.Steps, err = d.steps(f, fpath, tn.fields); err != nil {
				return nil, tn, err
			}
		case "side_effect":
			if t.SideEffect, _, err = d.boolean(f, fpath); err != nil {
				return nil, tn, err
			}
		case "behavior":
			s, _, err := d.enum(f, fpath, string(arbiter.Blocking), string(arbiter.NonBlocking))
			if err != nil {
				return nil, tn, err
			}
			t.Behavior = arbiter.Behavior(s)
		case "key":
			if t.Key, err = d.key(f, fpath); err != nil {
				return nil, tn, err
			}
		case "describe":
			if t.Describe, _, err = d.str(f, fpath); err != nil {
				return nil, tn, err
			}
		case "allowed":
			b, set, err := d.boolean(f, fpath)
			if err != nil {
				return nil, tn, err
			}
			t.Disallowed = set && !b
		case "hold":
			b, set, err := d.boolean(f, fpath)
			if err != nil {
				return nil, tn, err
			}
			t.NoHold = set && !b
		default:
			return nil, tn, d.unknown(f, path)
		}
	}
	if t.Name == "" {
		return nil, tn, d.errorf(n, "%s.name: required", path)
	}
	return t, tn, nil
}

func (d *decoder) key(kf field, path string) ([]arbiter.KeyArg, error) {
	items, err := d.sequence(kf.value, path)
	if err != nil {
		return nil, err
	}
	var args []arbiter.KeyArg
	seen := map[string]ast.Node{}
	for i, item := range items {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		if item.value == nil {
			return nil, d.errorf(item.node, "%s: must be a mapping with an arg, not null", ipath)
		}
		fields, err := d.mapping(item.value, ipath)
		if err != nil {
			return nil, err
		}
		var k arbiter.KeyArg
		var argNode ast.Node
		for _, f := range fields {
			fpath := ipath + "." + f.key
			switch f.key {
			case "arg":
				if k.Arg, _, err = d.str(f, fpath); err != nil {
					return nil, err
				}
				argNode = f.node
			case "as":
				s, _, err := d.enum(f, fpath, string(arbiter.KeyText), string(arbiter.KeyDatetime),
					string(arbiter.KeyNumber), string(arbiter.KeyExact))
				if err != nil {
					return nil, err
				}
				k.As = arbiter.KeyAs(s)
			default:
				return nil, d.unknown(f, ipath)
			}
		}
		if k.Arg == "" {
			at := argNode
			if at == nil {
				at = item.value
			}
			return nil, d.errorf(at, "%s.arg: required", ipath)
		}
		if first, dup := seen[k.Arg]; dup {
			return nil, d.errorf(argNode, "%s.arg: %q is listed twice, on lines %d and %d",
				ipath, k.Arg, line(first), line(argNode))
		}
		seen[k.Arg] = argNode
		args = append(args, k)
	}
	return args, nil
}

// steps decodes a tool's steps: a list of mappings {arg, ask, with_previous}. It
// records the nodes of the items and their fields in nodes ("steps[1]",
// "steps[1].arg"). A null value or an empty list is no steps.
func (d *decoder) steps(sf field, path string, nodes map[string]ast.Node) ([]arbiter.Step, error) {
	items, err := d.sequence(sf.value, path)
	if err != nil {
		return nil, err
	}
	var steps []arbiter.Step
	seen := map[string]ast.Node{}
	for i, item := range items {
		rel := fmt.Sprintf("steps[%d]", i)
		ipath := fmt.Sprintf("%s[%d]", path, i)
		nodes[rel] = item.node
		if item.value == nil {
			return nil, d.errorf(item.node, "%s: must be a mapping with an arg and an ask, not null", ipath)
		}
		fields, err := d.mapping(item.value, ipath)
		if err != nil {
			return nil, err
		}
		var st arbiter.Step
		for _, f := range fields {
			fpath := ipath + "." + f.key
			nodes[rel+"."+f.key] = f.node
			switch f.key {
			case "arg":
				if st.Arg, _, err = d.str(f, fpath); err != nil {
					return nil, err
				}
			case "ask":
				if st.Ask, _, err = d.str(f, fpath); err != nil {
					return nil, err
				}
			case "with_previous":
				if st.WithPrevious, _, err = d.boolean(f, fpath); err != nil {
					return nil, err
				}
			default:
				return nil, d.unknown(f, ipath)
			}
		}
		for _, req := range []struct{ key, v string }{{"arg", st.Arg}, {"ask", strings.TrimSpace(st.Ask)}} {
			if req.v == "" {
				at := nodes[rel+"."+req.key]
				if at == nil {
					at = item.value
				}
				return nil, d.errorf(at, "%s.%s: required", ipath, req.key)
			}
		}
		argNode := nodes[rel+".arg"]
		if first, dup := seen[st.Arg]; dup {
			return nil, d.errorf(argNode, "%s.arg: %q is asked twice, on lines %d and %d",
				ipath, st.Arg, line(first), line(argNode))
		}
		seen[st.Arg] = argNode
		steps = append(steps, st)
	}
	return steps, nil
}

// maxAsks decodes max_asks: a whole number, 1 or more; null is 0 (the default).
func (d *decoder) maxAsks(f field, path string) (int, error) {
	switch n := f.value.(type) {
	case nil:
		return 0, nil
	case *ast.IntegerNode:
		var v int64
		switch x := n.Value.(type) {
		case int64:
			v = x
		case uint64:
			if x > math.MaxInt32 {
				v = math.MaxInt32 + 1
			} else {
				v = int64(x)
			}
		}
		switch {
		case v < 0:
			return 0, d.errorf(n, "%s: %s is negative: give 1 or more (leave the field out for the default, %d)",
				path, n.Token.Value, arbiter.DefaultMaxAsks)
		case v == 0:
			return 0, d.errorf(n, "%s: 0 is not supported: a question is asked at least once; give 1 or more "+
				"(leave the field out for the default, %d)", path, arbiter.DefaultMaxAsks)
		case v > math.MaxInt32:
			return 0, d.errorf(n, "%s: %s is too large", path, n.Token.Value)
		}
		return int(v), nil
	case *ast.FloatNode:
		return 0, d.errorf(n, "%s: %s is not a whole number", path, n.Token.Value)
	default:
		return 0, d.errorf(n, "%s: must be a whole number such as 2, not %s", path, kind(n))
	}
}

// phrases decodes a list of intent phrases at path. A null value is (nil, nil): left
// out, the defaults apply; an empty list is an empty, non-nil slice.
func (d *decoder) phrases(sf field, path string) ([]string, error) {
	if sf.value == nil {
		return nil, nil
	}
	items, err := d.sequence(sf.value, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		at := item.node
		s, set, err := d.str(item, ipath)
		if err != nil {
			return nil, err
		}
		if !set {
			return nil, d.errorf(at, "%s: must be a string, not null", ipath)
		}
		if len(speech.Words(s)) == 0 {
			return nil, d.errorf(at, "%s: %q has no words", ipath, s)
		}
		out = append(out, s)
	}
	return out, nil
}

// languages decodes `languages: {LANG: {stop: [...], soft: [...], amend: [...],
// weak_amend: [...]}}`: each listed language's phrase set replaces the built-in one
// (lists left out are empty).
func (d *decoder) languages(lf field, p *arbiter.Policy) error {
	if lf.value == nil {
		return nil
	}
	langs, err := d.mapping(lf.value, "languages")
	if err != nil {
		return err
	}
	p.Languages = map[string]speech.Phrases{}
	for _, l := range langs {
		path := "languages." + l.key
		if len(l.key) < 2 || len(l.key) > 8 || strings.ToLower(l.key) != l.key || strings.ContainsAny(l.key, "-_ ") {
			return d.errorf(l.node, "%s: %q is not a primary language subtag (like es, fr, de)", path, l.key)
		}
		fields, err := d.mapping(l.value, path)
		if err != nil {
			return err
		}
		var ph speech.Phrases
		for _, f := range fields {
			list, err := d.phrases(f, path+"."+f.key)
			if err != nil {
				return err
			}
			switch f.key {
			case "stop":
				ph.Stop = list
			case "soft":
				ph.Soft = list
			case "amend":
				ph.Amend = list
			case "weak_amend":
				ph.WeakAmend = list
			default:
				return d.unknown(f, path)
			}
		}
		p.Languages[l.key] = ph
	}
	return nil
}

// timing decodes f into t if it is one of the timing fields; ok reports whether it was.
func (d *decoder) timing(f field, path string, t *arbiter.Timings) (ok bool, err error) {
	var dst *time.Duration
	switch f.key {
	case "grace":
		dst = &t.Grace
	case "transcript_timeout":
		dst = &t.TranscriptTimeout
	case "dedupe_window":
		dst = &t.DedupeWindow
	case "trigger_lookback":
		dst = &t.TriggerLookback
	case "abandon_wait":
		dst = &t.AbandonWait
	case "max_pending":
		dst = &t.MaxPending
	case "run_timeout":
		dst = &t.RunTimeout
	case "on_transcript_timeout", "on_abandon":
		s, _, err := d.enum(f, path, string(arbiter.Cancel), string(arbiter.Commit))
		if err != nil {
			return true, err
		}
		if f.key == "on_abandon" {
			t.OnAbandon = arbiter.OnTimeout(s)
		} else {
			t.OnTranscriptTimeout = arbiter.OnTimeout(s)
		}
		return true, nil
	default:
		return false, nil
	}
	*dst, _, err = d.duration(f, path)
	return true, err
}

// unknown is the error for a field that does not belong where it is.
func (d *decoder) unknown(f field, parent string) error {
	path := f.key
	if parent != "" {
		path = parent + "." + f.key
	}
	if f.key == "<<" {
		return d.errorf(f.node, "%s: merge keys are not supported", path)
	}
	return d.errorf(f.node, "%s: unknown field", path)
}

// resolve strips anchors (recording them) and follows aliases. Null gives nil.
func (d *decoder) resolve(n ast.Node, path string) (ast.Node, error) {
	for {
		switch v := n.(type) {
		case nil:
			return nil, nil
		case *ast.NullNode:
			return nil, nil
		case *ast.AnchorNode:
			if !isNil(v.Name) {
				d.anchors[v.Name.String()] = v.Value
			}
			n = v.Value
		case *ast.AliasNode:
			name := ""
			if !isNil(v.Value) {
				name = v.Value.String()
			}
			target, ok := d.anchors[name]
			if !ok {
				return nil, d.errorf(v, "%s: alias *%s has no anchor before it", path, name)
			}
			n = target
		case *ast.TagNode:
			return nil, d.errorf(v, "%s: YAML tags (%s) are not supported", path, v.Start.Value)
		default:
			if isNil(n) {
				return nil, nil
			}
			return n, nil
		}
	}
}

// mapping returns the fields of the mapping n; null gives none.
func (d *decoder) mapping(n ast.Node, path string) ([]field, error) {
	n, err := d.resolve(n, path)
	if err != nil || n == nil {
		return nil, err
	}
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		if path == "" {
			return nil, d.errorf(n, "the file must be a mapping (defaults, tools, stop_phrases, amend_phrases, languages), not %s", kind(n))
		}
		return nil, d.errorf(n, "%s: must be a mapping, not %s", path, kind(n))
	}
	fields := make([]field, 0, len(values))
	for _, mv := range values {
		var key string
		var keyNode ast.Node = mv
		if !isNil(mv.Key) {
			keyNode = mv.Key
			if s, ok := mv.Key.(*ast.StringNode); ok {
				key = s.Value
			} else {
				key = mv.Key.String()
			}
		}
		kpath := key
		if path != "" {
			kpath = path + "." + key
		}
		v, err := d.resolve(mv.Value, kpath)
		if err != nil {
			return nil, err
		}
		fields = append(fields, field{key: key, node: keyNode, value: v})
	}
	return fields, nil
}

// sequence returns the items of the list n: each item's node is the item as written
// (for its line), its value the item resolved (nil for null). Null gives none.
func (d *decoder) sequence(n ast.Node, path string) ([]field, error) {
	n, err := d.resolve(n, path)
	if err != nil || n == nil {
		return nil, err
	}
	s, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, d.errorf(n, "%s: must be a list, not %s", path, kind(n))
	}
	items := make([]field, len(s.Values))
	for i, v := range s.Values {
		items[i].node = v
		if items[i].value, err = d.resolve(v, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// str returns the string value of f; set is false for null.
func (d *decoder) str(f field, path string) (s string, set bool, err error) {
	switch v := f.value.(type) {
	case nil:
		return "", false, nil
	case *ast.StringNode:
		return v.Value, true, nil
	case *ast.LiteralNode:
		return v.Value.Value, true, nil
	default:
		return "", false, d.errorf(v, "%s: must be a string, not %s", path, kind(v))
	}
}

// enum returns the string value of f, one of allowed; set is false for null.
func (d *decoder) enum(f field, path string, allowed ...string) (s string, set bool, err error) {
	s, set, err = d.str(f, path)
	if err != nil || !set {
		return s, set, err
	}
	for _, a := range allowed {
		if s == a {
			return s, true, nil
		}
	}
	list := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	return "", false, d.errorf(f.value, "%s: %q is not %s", path, s, list)
}

// boolean returns the value of f; set is false for null.
func (d *decoder) boolean(f field, path string) (b bool, set bool, err error) {
	switch v := f.value.(type) {
	case nil:
		return false, false, nil
	case *ast.BoolNode:
		return v.Value, true, nil
	default:
		return false, false, d.errorf(v, "%s: must be true or false, not %s", path, kind(v))
	}
}

// duration returns the value of f, a positive Go duration; set is false for null.
func (d *decoder) duration(f field, path string) (v time.Duration, set bool, err error) {
	switch n := f.value.(type) {
	case nil:
		return 0, false, nil
	case *ast.IntegerNode, *ast.FloatNode:
		return 0, false, d.errorf(n, "%s: %s has no unit: give a duration such as \"%ss\" or \"%sms\"",
			path, n.String(), n.String(), n.String())
	case *ast.StringNode:
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return 0, false, d.errorf(n, "%s: %q has no unit: give a duration such as \"%ss\" or \"%sms\"",
				path, n.Value, n.Value, n.Value)
		}
		v, err := time.ParseDuration(n.Value)
		if err != nil {
			return 0, false, d.errorf(n, "%s: %q is not a duration such as \"1.5s\" or \"300ms\"", path, n.Value)
		}
		if v < 0 {
			return 0, false, d.errorf(n, "%s: %q is negative", path, n.Value)
		}
		if v == 0 {
			return 0, false, d.errorf(n, "%s: %q is zero, which is not supported (leave the field out for the default)", path, n.Value)
		}
		return v, true, nil
	default:
		return 0, false, d.errorf(n, "%s: must be a duration such as \"1.5s\", not %s", path, kind(n))
	}
}

// errorf returns an Invalid error "NAME:LINE: message" (or "NAME: message" when n has
// no line).
func (d *decoder) errorf(n ast.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if l := line(n); l > 0 {
		return arbiter.Errorf(arbiter.Invalid, "%s:%d: %s", d.name, l, msg)
	}
	return arbiter.Errorf(arbiter.Invalid, "%s: %s", d.name, msg)
}

// line returns n's line, 0 if it has none.
func line(n ast.Node) int {
	if isNil(n) {
		return 0
	}
	if doc, ok := n.(*ast.DocumentNode); ok {
		if isNil(doc.Body) {
			return 0
		}
		n = doc.Body
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// kind names n's type for a type error: "a string", "a list"...
func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case nil, *ast.NullNode:
		return "null"
	default:
		return "a " + strings.ToLower(n.Type().String())
	}
}

// isNil reports whether n is nil, including a typed nil pointer in the interface.
func isNil(n any) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
