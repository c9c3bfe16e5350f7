package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"pidnode/handlev"
)

// MaxJSONDepth bounds the nesting of arrays and objects in a write's JSON.
// The deepest legitimate payload (related_identifiers[i].related_identifier.type)
// is 5 levels deep.
const MaxJSONDepth = 16

// CheckJSON verifies that b is one well-formed JSON value in valid UTF-8, no
// deeper than MaxJSONDepth, without duplicate object keys. encoding/json alone
// would silently replace invalid UTF-8 and let the last duplicate win, so a
// payload could mean different things to different readers.
func CheckJSON(b []byte) error {
	if err := checkText(b); err != nil {
		return err
	}
	if json.Valid(b) {
		// The common case, without an allocation per token: walking a
		// create body through the Token API would be the largest single
		// part of a create's CPU.
		return checkShape(b)
	}
	// Invalid: the token walk finds the first problem in document order
	// (a duplicate key before a syntax error is reported as such).
	return checkTokens(b)
}

// checkText is CheckJSON's check of b as text: valid UTF-8, no escaped lone
// surrogate (checkSurrogates).
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, n := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &SyntaxError{Msg: fmt.Sprintf("request body is not valid UTF-8 (first invalid byte at offset %d)", off)}
	}
	return checkSurrogates(b)
}

// checkShape is CheckJSON's depth and duplicate key check of a body that
// json.Valid accepts, in one pass over the bytes. Errors are those of
// checkTokens, found in the same order.
func checkShape(b []byte) error {
	type frame struct {
		obj  bool
		keys [][]byte            // small objects: linear search; slices of b
		set  map[string]struct{} // beyond smallObject keys
	}
	const smallObject = 16
	var stack []frame
	expKey := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= MaxJSONDepth {
				return &SyntaxError{Msg: fmt.Sprintf("request body nests deeper than %d levels", MaxJSONDepth)}
			}
			stack = append(stack, frame{obj: c == '{'})
			expKey = c == '{'
		case '}', ']':
			stack = stack[:len(stack)-1]
			expKey = false
		case ',':
			expKey = len(stack) > 0 && stack[len(stack)-1].obj
		case '"':
			j, esc := i+1, false
			for ; b[j] != '"'; j++ {
				if b[j] == '\\' {
					esc = true
					j++
				}
			}
			if expKey {
				k := b[i+1 : j]
				if esc {
					var ks string
					if err := json.Unmarshal(b[i:j+1], &ks); err != nil {
						return checkTokens(b)
					}
					k = []byte(ks)
				}
				f := &stack[len(stack)-1]
				dup := false
				if f.set != nil {
					_, dup = f.set[string(k)]
					f.set[string(k)] = struct{}{}
				} else {
					for _, x := range f.keys {
						if dup = bytes.Equal(x, k); dup {
							break
						}
					}
					f.keys = append(f.keys, k)
					if len(f.keys) > smallObject {
						f.set = make(map[string]struct{}, 2*len(f.keys))
						for _, x := range f.keys {
							f.set[string(x)] = struct{}{}
						}
						f.keys = nil
					}
				}
				if dup {
					return &SyntaxError{Msg: fmt.Sprintf("duplicate key %q in a JSON object", k)}
				}
				expKey = false
			}
			i = j
		}
	}
	return nil
}

// checkTokens is CheckJSON's check of a body through the JSON token stream.
func checkTokens(b []byte) error {
	if err := checkSurrogates(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj    bool
		keys   map[string]struct{}
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &SyntaxError{Msg: fmt.Sprintf("request body is not valid JSON: %v", jsonErr(err))}
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expKey {
			k, ok := tok.(string)
			if ok {
				if _, dup := top.keys[k]; dup {
					return &SyntaxError{Msg: fmt.Sprintf("duplicate key %q in a JSON object", k)}
				}
				top.keys[k] = struct{}{}
				top.expKey = false
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= MaxJSONDepth {
					return &SyntaxError{Msg: fmt.Sprintf("request body nests deeper than %d levels", MaxJSONDepth)}
				}
				stack = append(stack, &frame{obj: t == '{', keys: map[string]struct{}{}, expKey: t == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].expKey = true
				}
			}
		default:
			if top != nil && top.obj {
				top.expKey = true
			}
		}
		if len(stack) == 0 && dec.More() {
			return &SyntaxError{Msg: "request body holds more than one JSON value"}
		}
	}
	return nil
}

// checkSurrogates refuses a string with an escaped lone UTF-16 surrogate
// (handlev.FindLoneSurrogate), which encoding/json would silently decode as
// U+FFFD, with a *ValidationError naming the field: the payload is
// well-formed JSON whose value is not a string of characters, as raw bytes
// that are not UTF-8 are not.
func checkSurrogates(b []byte) error {
	k := handlev.FindLoneSurrogate(b)
	if k < 0 {
		return nil
	}
	path, inKey := jsonPathAt(b, k)
	esc := string(b[k : k+6])
	if inKey {
		return &ValidationError{Errors: []FieldError{{Field: path, Message: fmt.Sprintf(
			"has a member name with the escape %s, a lone UTF-16 surrogate, which is no character (RFC 8259 §8.2)", esc)}}}
	}
	return &ValidationError{Errors: []FieldError{{Field: path, Message: fmt.Sprintf(
		"holds the escape %s, a lone UTF-16 surrogate, which is no character (RFC 8259 §8.2); send the character itself or a complete surrogate pair", esc)}}}
}

// jsonPathAt returns the path, as FieldError.Field writes it
// ("metadata.related_identifiers[2].relation_type"), of the string of the
// JSON text b that contains byte offset off, and whether that string is a
// member name (then the path is its object's). The top level is "(body)".
// b need not be valid JSON; the path is then a best guess.
func jsonPathAt(b []byte, off int) (path string, inKey bool) {
	type frame struct {
		obj    bool
		expKey bool
		key    string
		idx    int
	}
	var stack []frame
	render := func(n int) string {
		var sb strings.Builder
		for _, f := range stack[:n] {
			if f.obj {
				if sb.Len() > 0 {
					sb.WriteByte('.')
				}
				sb.WriteString(f.key)
			} else {
				fmt.Fprintf(&sb, "[%d]", f.idx)
			}
		}
		if sb.Len() == 0 {
			return "(body)"
		}
		return sb.String()
	}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			stack = append(stack, frame{obj: b[i] == '{', expKey: b[i] == '{'})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].obj {
					stack[n-1].expKey = true
				} else {
					stack[n-1].idx++
				}
			}
		case '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			n := len(stack)
			key := n > 0 && stack[n-1].obj && stack[n-1].expKey
			if off > i && off < j {
				if key {
					return render(n - 1), true
				}
				return render(n), false
			}
			if key {
				var k string
				if json.Unmarshal(b[i:min(j+1, len(b))], &k) != nil {
					k = string(b[i+1 : min(j, len(b))])
				}
				stack[n-1].key, stack[n-1].expKey = k, false
			}
			i = j
		}
	}
	return render(len(stack)), false
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

// DecodeAny checks b (CheckJSON) and decodes it into generic values, numbers as
// json.Number, for model validation: what json.Decoder with UseNumber gives.
// Valid JSON, the common case, is checked and decoded in one pass
// (decodeStrict) instead of encoding/json's scanner passes and reflection; its
// strings share one copy of b.
func DecodeAny(b []byte) (any, error) {
	if err := checkText(b); err != nil {
		return nil, err
	}
	v, err := decodeStrict(b)
	switch {
	case err == nil:
		return v, nil
	case err != errNotValid && json.Valid(b):
		// A nesting or duplicate key error, in a valid text: checkShape's.
		return nil, err
	}
	// Not valid JSON (or not JSON decodeStrict knows to be valid):
	// CheckJSON's checks and encoding/json's decoding, with their errors.
	if err := CheckJSON(b); err != nil {
		return nil, err
	}
	return decodeStd(b)
}

// decodeStd is DecodeAny's decoding through encoding/json, of a body that
// CheckJSON accepted.
func decodeStd(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &SyntaxError{Msg: fmt.Sprintf("request body is not valid JSON: %v", jsonErr(err))}
	}
	return v, nil
}

// errNotValid is decodeStrict's verdict on a text that is not one JSON
// value (RFC 8259): DecodeAny then leaves the text to CheckJSON, which
// says what is wrong.
var errNotValid = errors.New("model: not valid JSON")

// decodeStrict checks and decodes b, which checkText accepted, in one pass:
// what json.Decoder with UseNumber gives (objects map[string]any, arrays
// []any never nil, numbers json.Number) for a text that json.Valid accepts,
// errNotValid for one it refuses. It also refuses, as checkShape does, the
// first object or array nested deeper than MaxJSONDepth or duplicate key in
// document order, with checkShape's error; the text after it is not read.
func decodeStrict(b []byte) (any, error) {
	d := strictDecoder{b: b}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.space(); d.i != len(b) {
		return nil, errNotValid
	}
	return v, nil
}

type strictDecoder struct {
	b []byte
	i int
	// s is b as a string, made on the first string or number: those
	// without escapes are slices of it, one allocation for all of them.
	s string
}

// text returns b[i:j] as a string.
func (d *strictDecoder) text(i, j int) string {
	if d.s == "" {
		d.s = string(d.b)
	}
	return d.s[i:j]
}

func (d *strictDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next returns the byte at d.i, 0 at the end.
func (d *strictDecoder) next() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes lit at d.i.
func (d *strictDecoder) literal(lit string) error {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return errNotValid
	}
	d.i += len(lit)
	return nil
}

// value decodes the value at d.i, inside depth arrays and objects.
func (d *strictDecoder) value(depth int) (any, error) {
	switch c := d.next(); c {
	case '{', '[':
		if depth >= MaxJSONDepth {
			return nil, &SyntaxError{Msg: fmt.Sprintf("request body nests deeper than %d levels", MaxJSONDepth)}
		}
		d.i++
		d.space()
		if c == '[' {
			return d.array(depth + 1)
		}
		return d.object(depth + 1)
	case '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return s, nil
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	return d.number()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number consumes a number (RFC 8259 §6) at d.i.
func (d *strictDecoder) number() (any, error) {
	i := d.i
	if d.next() == '-' {
		d.i++
	}
	switch c := d.next(); {
	case c == '0':
		d.i++
	case '1' <= c && c <= '9':
		for d.i++; isDigit(d.next()); d.i++ {
		}
	default:
		return nil, errNotValid
	}
	if d.next() == '.' {
		d.i++
		if !isDigit(d.next()) {
			return nil, errNotValid
		}
		for ; isDigit(d.next()); d.i++ {
		}
	}
	if c := d.next(); c == 'e' || c == 'E' {
		d.i++
		if c := d.next(); c == '+' || c == '-' {
			d.i++
		}
		if !isDigit(d.next()) {
			return nil, errNotValid
		}
		for ; isDigit(d.next()); d.i++ {
		}
	}
	return json.Number(d.text(i, d.i)), nil
}

// array decodes the members of an array whose '[' is consumed.
func (d *strictDecoder) array(depth int) (any, error) {
	a := make([]any, 0)
	if d.next() == ']' {
		d.i++
		return a, nil
	}
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		switch d.next() {
		case ']':
			d.i++
			return a, nil
		case ',':
			d.i++
			d.space()
		default:
			return nil, errNotValid
		}
	}
}

// object decodes the members of an object whose '{' is consumed.
func (d *strictDecoder) object(depth int) (any, error) {
	m := make(map[string]any)
	if d.next() == '}' {
		d.i++
		return m, nil
	}
	for {
		if d.next() != '"' {
			return nil, errNotValid
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, &SyntaxError{Msg: fmt.Sprintf("duplicate key %q in a JSON object", k)}
		}
		d.space()
		if d.next() != ':' {
			return nil, errNotValid
		}
		d.i++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		switch d.next() {
		case '}':
			d.i++
			return m, nil
		case ',':
			d.i++
			d.space()
		default:
			return nil, errNotValid
		}
	}
}

// str decodes the string whose '"' is at d.i: as it is without escapes (b
// is valid UTF-8), through encoding/json with them.
func (d *strictDecoder) str() (string, error) {
	i := d.i + 1
	j, esc := i, false
	for ; ; j++ {
		if j >= len(d.b) {
			return "", errNotValid
		}
		c := d.b[j]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", errNotValid
		}
		if c == '\\' {
			esc = true
			j++
			if j >= len(d.b) {
				return "", errNotValid
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d.b)-j < 5 || !isHex(d.b[j+1]) || !isHex(d.b[j+2]) || !isHex(d.b[j+3]) || !isHex(d.b[j+4]) {
					return "", errNotValid
				}
				j += 4
			default:
				return "", errNotValid
			}
		}
	}
	d.i = j + 1
	if !esc {
		return d.text(i, j), nil
	}
	var s string
	if err := json.Unmarshal(d.b[i-1:j+1], &s); err != nil {
		return "", errNotValid
	}
	return s, nil
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// DecodeObject decodes the JSON text of one write (DecodeAny), which must be
// an object.
func DecodeObject(b []byte) (map[string]any, error) {
	v, err := DecodeAny(b)
	if err != nil {
		return nil, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, &ValidationError{Errors: []FieldError{{Field: "(body)", Message: "must be a JSON object {\"url\": …, \"metadata\": {…}}"}}}
	}
	return top, nil
}
