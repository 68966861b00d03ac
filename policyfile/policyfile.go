// Package policyfile reads the tool-policy file (the YAML format of "Tool policy file"
// in docs/trace-format.md) into an *arbiter.Policy.
//
// The reader is strict. The file is one YAML document, a mapping, decoded into the
// structs of format.go with unknown fields refused; a value of the wrong type is an
// error, never converted (a number is not a string, "yes" is not a boolean, 2.5 is not
// a whole number); a duration is a string with a unit ("1.5s", parsed by
// time.ParseDuration); a mapping key given twice, YAML tags, merge keys, keys that are
// not strings and aliases without an anchor before them are refused. A null value (a
// field with nothing after the colon, or "null") means the field was left out; a null
// list item is an error.
//
// What a value means is checked by arbiter.Policy.Validate, the one place the rules of
// a policy live; this package adds only the rules of the format: a duration, or
// max_asks, set to zero (zero would mean "the default": leave the field out for that),
// an empty confirm_tool, unknown_tools other than pass or reject, and a tool name given
// twice.
//
// Besides the fields of the spec, the file may carry top-level stop_phrases and
// amend_phrases lists (English; left out, the arbiter's defaults apply; an explicit
// empty amend_phrases means none, an empty stop_phrases is refused: it would turn
// every stop off) and a languages mapping (per language: stop, soft, amend,
// weak_amend, not_stop, correct and bare lists replacing the built-in set, stop left out
// keeping the built-in stops; speech.Phrases says what each list does).
//
// Every error is an *arbiter.Error of kind arbiter.Invalid whose message starts with
// the file name and, where there is one, the line, then names the field as the file
// does: "booking.yaml:12: tools[0].key[0].as: "date" is not text, datetime, number or
// exact".
package policyfile

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/voicearbiter/arbiter/arbiter"
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
// messages, such as its path. An empty document (comments only, or null) gives the
// default policy.
//
// Errors, all of kind arbiter.Invalid with a message "NAME:LINE: FIELD: PROBLEM" (or
// "NAME: PROBLEM" where there is no line): YAML syntax errors (including a mapping key
// given twice) and more than one YAML document; what the package documentation says
// the format refuses (an unknown field, a value of the wrong type, a duration without
// a unit, a zero duration or max_asks, a null list item, ...); and every error of
// Policy.Validate (a negative duration, an enum value out of range, a key arg listed
// twice, a confirm_tool that is a tool of the file, ...), reported on the line of the
// field at fault, or of the nearest enclosing entry the file has when the field is
// left out, with tools named by their place in the file (tools[0]) and, where the
// rule involves a second field, that field's line ("first on line 9").
func Parse(data []byte, name string) (*arbiter.Policy, error) {
	d, err := parse(data, name)
	if err != nil {
		return nil, err
	}
	var f file
	if d.body != nil {
		if err := yaml.NodeToValue(d.body, &f, yaml.Strict()); err != nil {
			return nil, d.decodeError(err)
		}
	}
	p, names, err := f.policy()
	if err == nil {
		err = p.Validate()
	}
	var fe *arbiter.FieldError
	if errors.As(err, &fe) {
		return nil, d.fieldError(fe, names)
	}
	if err != nil {
		return nil, arbiter.Errorf(arbiter.Invalid, "%s: %s", name, arbiter.MessageOf(err))
	}
	return p, nil
}

// doc is a parsed policy file: its one document's body (nil when empty) and its
// anchors, for finding the node of a field path.
type doc struct {
	name    string
	body    ast.Node
	anchors map[string]ast.Node
}

// parse parses data and checks what struct decoding would let through: tags, merge
// keys, keys that are not strings, aliases without an anchor before them.
func parse(data []byte, name string) (*doc, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	d := &doc{name: name, anchors: map[string]ast.Node{}}
	for _, doc := range f.Docs {
		if isNil(doc) || isNil(doc.Body) {
			continue
		}
		if d.body != nil {
			return nil, d.errorAt(doc.Body, "a second YAML document: a tool policy is one document")
		}
		d.body = doc.Body
	}
	root := d.body
	if a, ok := root.(*ast.AnchorNode); ok {
		root = a.Value
	}
	switch root.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.TagNode, *ast.AliasNode: // tags and aliases: check
	case nil, *ast.NullNode:
		d.body = nil // an empty document
	default:
		return nil, d.errorAt(root, "the file must be a mapping (defaults, tools, stop_phrases, amend_phrases, languages), not %s",
			kind(root.Type()))
	}
	if err := d.check(d.body); err != nil {
		return nil, err
	}
	return d, nil
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

// check walks n in document order and refuses the YAML features the format does not
// take; it records each anchor once its node is complete, so an alias inside the
// node it names has no anchor before it.
func (d *doc) check(n ast.Node) error {
	if isNil(n) {
		return nil
	}
	switch n := n.(type) {
	case *ast.TagNode:
		return d.errorOn(n, "YAML tags (%s) are not supported", n.Start.Value)
	case *ast.AliasNode:
		if _, ok := d.anchors[refName(n.Value)]; !ok {
			return d.errorOn(n, "alias *%s has no anchor before it", refName(n.Value))
		}
	case *ast.AnchorNode:
		if err := d.check(n.Value); err != nil {
			return err
		}
		d.anchors[refName(n.Name)] = d.resolve(n.Value) // no alias: resolve ends
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if err := d.check(mv); err != nil {
				return err
			}
		}
	case *ast.MappingValueNode:
		if err := d.checkKey(n); err != nil {
			return err
		}
		return d.check(n.Value)
	case *ast.SequenceNode:
		for _, v := range n.Values {
			if err := d.check(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkKey refuses a key that is not a string, merge keys included.
func (d *doc) checkKey(mv *ast.MappingValueNode) error {
	if isNil(mv.Key) {
		return d.errorOn(mv, "a key must be a string, not null")
	}
	switch k := mv.Key.(type) {
	case *ast.StringNode:
		return nil
	case *ast.MergeKeyNode:
		return d.errorOn(k, "merge keys are not supported")
	default:
		return d.errorOn(k, "a key must be a string, not %s", kind(k.Type()))
	}
}

// decodeError turns an error of decoding d.body into the file's structs into an
// Invalid error naming the line and field.
func (d *doc) decodeError(err error) error {
	var ne *nodeError
	if errors.As(err, &ne) {
		return d.errorOn(ne.node, "%s", ne.msg)
	}
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return arbiter.Errorf(arbiter.Invalid, "%s: %v", d.name, err)
	}
	n := d.nodeAt(ye.GetToken())
	var unknown *yaml.UnknownFieldError
	var mistyped *yaml.UnexpectedNodeTypeError
	switch {
	case n == nil:
		return arbiter.Errorf(arbiter.Invalid, "%s:%d: %s", d.name, ye.GetToken().Position.Line, ye.GetMessage())
	case errors.As(err, &unknown):
		if first := firstUnknown(d.body, reflect.TypeFor[file]()); first != nil {
			n = first
		}
		return d.errorOn(n, "unknown field")
	case errors.As(err, &mistyped) && nodePath(n) == "":
		return d.errorAt(n, "the file must be a mapping (defaults, tools, stop_phrases, amend_phrases, languages), not %s",
			kind(mistyped.Actual))
	case errors.As(err, &mistyped):
		return d.errorOn(n, "must be %s, not %s", kind(mistyped.Expected), kind(mistyped.Actual))
	}
	return d.errorOn(n, "%s", ye.GetMessage())
}

// firstUnknown returns the first key in document order below n that names no field
// of t, the type n decodes into; nil if there is none. The strict decoder names one
// unknown field of a mapping, at random (it keeps them in a map); this is the one a
// reader fixes first. Aliases are not followed.
func firstUnknown(n ast.Node, t reflect.Type) ast.Node {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if a, ok := n.(*ast.AnchorNode); ok {
		n = a.Value
	}
	switch {
	case reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.NodeUnmarshaler]()):
	case t.Kind() == reflect.Slice:
		if s, ok := n.(*ast.SequenceNode); ok {
			for _, v := range s.Values {
				if k := firstUnknown(v, t.Elem()); k != nil {
					return k
				}
			}
		}
	case t.Kind() == reflect.Map, t.Kind() == reflect.Struct:
		for _, mv := range mappingValues(n) {
			key, _ := mv.Key.(*ast.StringNode)
			if key == nil {
				continue
			}
			vt, known := valueType(t, key.Value)
			if !known {
				return key
			}
			if k := firstUnknown(mv.Value, vt); k != nil {
				return k
			}
		}
	}
	return nil
}

// valueType returns the type the value of key decodes into in t (a map or a struct,
// whose ",inline" fields count as its own); false if t has no such field.
func valueType(t reflect.Type, key string) (reflect.Type, bool) {
	if t.Kind() == reflect.Map {
		return t.Elem(), true
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			if vt, ok := valueType(f.Type, key); ok {
				return vt, true
			}
		} else if name == key && name != "" {
			return f.Type, true
		}
	}
	return nil, false
}

// mappingValues returns the fields of the mapping n; none if n is not a mapping.
func mappingValues(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

// nodeAt returns the first node in document order whose token is tk, nil if none.
func (d *doc) nodeAt(tk *token.Token) ast.Node {
	f := &finder{tk: tk}
	if d.body != nil {
		ast.Walk(f, d.body)
	}
	return f.found
}

type finder struct {
	tk    *token.Token
	found ast.Node
}

func (f *finder) Visit(n ast.Node) ast.Visitor {
	if f.found != nil || isNil(n) {
		return nil
	}
	if n.GetToken() == f.tk {
		f.found = n
		return nil
	}
	return f
}

// fieldError turns a FieldError of f.policy or Policy.Validate into an Invalid error
// with the file's line and its names for the fields: a tool is tools[INDEX], names
// giving each tool's name by its index; a value the file wrote is quoted as written;
// the other field a rule involves is given by its line.
func (d *doc) fieldError(fe *arbiter.FieldError, names []string) error {
	path := filePath(fe.Path, names)
	at, value, found := d.locate(path)
	v := fe.Value
	if w := written(d.resolve(value)); found && v != "" && w != "" {
		v = w
	}
	other := ""
	if fe.Other != nil {
		if on, _, _ := d.locate(filePath(fe.Other, names)); line(on) > 0 {
			other = fmt.Sprintf("on line %d", line(on))
		} else {
			other = "at " + arbiter.FieldPath(filePath(fe.Other, names))
		}
	}
	return d.errorAt(at, "%s", fe.Format(arbiter.FieldPath(path), v, other))
}

// filePath returns path (of arbiter.Policy) as a path of the file: a tool, an Entry
// by name below "tools", becomes its index (the first tool of that name); any other
// entry (a language) a mapping key.
func filePath(path []any, names []string) []any {
	out := make([]any, len(path))
	for i, el := range path {
		out[i] = el
		e, ok := el.(arbiter.Entry)
		if !ok {
			continue
		}
		out[i] = string(e)
		if i == 1 && path[0] == "tools" {
			for j, name := range names {
				if name == string(e) {
					out[i] = j
					break
				}
			}
		}
	}
	return out
}

// locate follows path (field names and list indexes) down from the body. It returns
// the node that stands for the field in the file (a mapping field's key, a list's
// item) and its value; when the file does not have the whole path (a field left out),
// the node of the longest part it has, a nil value and found false.
func (d *doc) locate(path []any) (at, value ast.Node, found bool) {
	at, value = d.body, d.body
	for _, el := range path {
		k, v := child(d.resolve(value), el)
		if k == nil {
			return at, nil, false
		}
		at, value = k, v
	}
	return at, value, true
}

// child returns the key and the value of the field el (a string) of the mapping n, or
// the item el (an int) of the list n twice; nils when n has no such field or item.
func child(n ast.Node, el any) (key, value ast.Node) {
	if isNil(n) {
		return nil, nil
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if k, v := child(mv, el); k != nil {
				return k, v
			}
		}
	case *ast.MappingValueNode:
		if k, ok := n.Key.(*ast.StringNode); ok && el == k.Value {
			return k, n.Value
		}
	case *ast.SequenceNode:
		if i, ok := el.(int); ok && i >= 0 && i < len(n.Values) {
			return n.Values[i], n.Values[i]
		}
	}
	return nil, nil
}

// resolve strips anchors from n and follows an alias to the node it names (which
// check recorded resolved); nil for nil.
func (d *doc) resolve(n ast.Node) ast.Node {
	for !isNil(n) {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			return d.anchors[refName(v.Value)]
		default:
			return n
		}
	}
	return nil
}

// refName returns the name of an anchor or alias from its name node.
func refName(n ast.Node) string {
	if isNil(n) || n.GetToken() == nil {
		return ""
	}
	return n.GetToken().Value
}

// written returns a scalar as the file wrote it, for a message: a string quoted, a
// number bare; "" for any other node.
func written(n ast.Node) string {
	switch n := n.(type) {
	case *ast.StringNode:
		return strconv.Quote(n.Value)
	case *ast.IntegerNode, *ast.FloatNode:
		return n.GetToken().Value
	}
	return ""
}

// errorOn returns an Invalid error "NAME:LINE: PATH: message" with n's line and path
// (no "PATH: " at the top level).
func (d *doc) errorOn(n ast.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if p := nodePath(n); p != "" {
		msg = p + ": " + msg
	}
	return d.errorAt(n, "%s", msg)
}

// errorAt returns an Invalid error "NAME:LINE: message" (or "NAME: message" when n has
// no line).
func (d *doc) errorAt(n ast.Node, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if l := line(n); l > 0 {
		return arbiter.Errorf(arbiter.Invalid, "%s:%d: %s", d.name, l, msg)
	}
	return arbiter.Errorf(arbiter.Invalid, "%s: %s", d.name, msg)
}

// nodePath returns the path of n in the file as messages name it ("tools[0].key"),
// from the path the parser gave it; "" for the top level.
func nodePath(n ast.Node) string {
	if isNil(n) {
		return ""
	}
	p := n.GetPath()
	if len(p) > 0 && p[0] == '$' {
		p = p[1:]
	}
	if len(p) > 0 && p[0] == '.' {
		p = p[1:]
	}
	return p
}

// line returns n's line, 0 if it has none.
func line(n ast.Node) int {
	if isNil(n) {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// kind names a node type for a type error: "a string", "a list"...
func kind(t ast.NodeType) string {
	switch t {
	case ast.StringType, ast.LiteralType:
		return "a string"
	case ast.IntegerType, ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.BoolType:
		return "a boolean"
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.NullType:
		return "null"
	default:
		if name := t.YAMLName(); name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
			return "an " + name
		}
		return "a " + t.YAMLName()
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
