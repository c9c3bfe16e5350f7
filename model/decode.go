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
		// The common case, without a token per allocation: a create body
		// through the Token API cost ~45µs, the largest single part of a
		// create's CPU.
		return checkShape(b)
	}
	// Invalid: the token walk finds the first problem in document order, as
	// it always did (a duplicate key before a syntax error is reported as such).
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
// (decodeValid) instead of encoding/json's scanner passes and reflection; its
// strings share one copy of b.
func DecodeAny(b []byte) (any, error) {
	if err := checkText(b); err != nil {
		return nil, err
	}
	if json.Valid(b) {
		return decodeValid(b)
	}
	if err := checkTokens(b); err != nil {
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

// decodeValid decodes b, which json.Valid accepts, as json.Decoder with
// UseNumber does (objects map[string]any, arrays []any never nil, numbers
// json.Number), with checkShape's checks: the first object nested deeper
// than MaxJSONDepth or duplicate key, in document order, is checkShape's
// error. b must also have passed checkText.
func decodeValid(b []byte) (any, error) {
	d := validDecoder{b: b}
	d.space()
	return d.value(0)
}

type validDecoder struct {
	b []byte
	i int
	// s is b as a string, made on the first string or number: those
	// without escapes are slices of it, one allocation for all of them.
	s string
}

// text returns b[i:j] as a string.
func (d *validDecoder) text(i, j int) string {
	if d.s == "" {
		d.s = string(d.b)
	}
	return d.s[i:j]
}

func (d *validDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i, inside depth arrays and objects.
func (d *validDecoder) value(depth int) (any, error) {
	switch c := d.b[d.i]; c {
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
		return d.str()
	case 't':
		d.i += len("true")
		return true, nil
	case 'f':
		d.i += len("false")
		return false, nil
	case 'n':
		d.i += len("null")
		return nil, nil
	}
	j := d.i
	for j < len(d.b) {
		switch d.b[j] {
		case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			j++
			continue
		}
		break
	}
	n := json.Number(d.text(d.i, j))
	d.i = j
	return n, nil
}

// array decodes the members of an array whose '[' is consumed.
func (d *validDecoder) array(depth int) (any, error) {
	a := make([]any, 0)
	if d.b[d.i] == ']' {
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
		c := d.b[d.i]
		d.i++
		if c == ']' {
			return a, nil
		}
		d.space() // after ','
	}
}

// object decodes the members of an object whose '{' is consumed.
func (d *validDecoder) object(depth int) (any, error) {
	m := make(map[string]any)
	if d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, &SyntaxError{Msg: fmt.Sprintf("duplicate key %q in a JSON object", k)}
		}
		d.space()
		d.i++ // ':'
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		c := d.b[d.i]
		d.i++
		if c == '}' {
			return m, nil
		}
		d.space() // after ','
	}
}

// str decodes the string at d.i: as it is without escapes (b is valid UTF-8
// and valid JSON, so it has no control characters), through encoding/json
// with them.
func (d *validDecoder) str() (string, error) {
	i := d.i + 1
	j, esc := i, false
	for ; d.b[j] != '"'; j++ {
		if d.b[j] == '\\' {
			esc = true
			j++
		}
	}
	d.i = j + 1
	if !esc {
		return d.text(i, j), nil
	}
	var s string
	if err := json.Unmarshal(d.b[i-1:j+1], &s); err != nil {
		return "", &SyntaxError{Msg: fmt.Sprintf("request body is not valid JSON: %v", jsonErr(err))}
	}
	return s, nil
}

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
