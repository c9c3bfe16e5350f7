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
	"pidnode/internal/jsontext"
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
// json.Valid accepts: the strict walk (strictDecoder) without building
// values. Errors are those of checkTokens, found in the same order.
func checkShape(b []byte) error {
	d := strictDecoder{Scanner: jsontext.Scanner{B: b, Replace: true}}
	_, _, err := d.value(d.Space(0), 0)
	return err
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
//
// It is a second decoder beside encoding/json (which stays for the error
// messages of invalid text) because it pays for itself on the create,
// update and bulk paths: compare BenchmarkDecodeAny with
// BenchmarkDecodeAnyStd.
func decodeStrict(b []byte) (any, error) {
	d := strictDecoder{Scanner: jsontext.Scanner{B: b, Replace: true}, build: true}
	v, e, err := d.value(d.Space(0), 0)
	if err != nil {
		return nil, err
	}
	if d.Space(e) != len(b) {
		return nil, errNotValid
	}
	return v, nil
}

// strictDecoder is the strict mode of the tokenizer (internal/jsontext):
// its walk refuses, in document order, the first object or array nested
// deeper than MaxJSONDepth and the first duplicate key, and with build
// decodes the values. The text must have passed checkText (valid UTF-8, no
// lone surrogate escapes), so the Scanner's encoding/json decoding of
// strings (Replace) is exact.
type strictDecoder struct {
	jsontext.Scanner
	build bool
	// s is B as a string, made on the first string or number: those
	// without escapes are slices of it, one allocation for all of them.
	s string
	// keys holds the keys of the objects being walked without build, for
	// the duplicate check; an object's keys start at its index into it.
	keys [][]byte
}

// text returns B[i:j] as a string.
func (d *strictDecoder) text(i, j int) string {
	if d.s == "" {
		d.s = string(d.B)
	}
	return d.s[i:j]
}

// value checks (and with build decodes) the value at i, inside depth
// arrays and objects, and returns the index after it.
func (d *strictDecoder) value(i, depth int) (any, int, error) {
	b := d.B
	if i >= len(b) {
		return nil, 0, errNotValid
	}
	switch c := b[i]; c {
	case '{', '[':
		if depth >= MaxJSONDepth {
			return nil, 0, &SyntaxError{Msg: fmt.Sprintf("request body nests deeper than %d levels", MaxJSONDepth)}
		}
		if c == '[' {
			return d.array(i, depth+1)
		}
		return d.object(i, depth+1)
	case '"':
		e, esc, ok := d.SkipString(i)
		if !ok {
			return nil, 0, errNotValid
		}
		if !d.build {
			return nil, e, nil
		}
		if !esc {
			return d.text(i+1, e-1), e, nil
		}
		v, _, _ := d.String(i)
		return string(v), e, nil
	case 't':
		e, ok := d.Lit(i, "true")
		return true, e, validIf(ok)
	case 'f':
		e, ok := d.Lit(i, "false")
		return false, e, validIf(ok)
	case 'n':
		e, ok := d.Lit(i, "null")
		return nil, e, validIf(ok)
	}
	e, _, _, ok := d.Number(i)
	if !ok {
		return nil, 0, errNotValid
	}
	if !d.build {
		return nil, e, nil
	}
	return json.Number(d.text(i, e)), e, nil
}

func validIf(ok bool) error {
	if !ok {
		return errNotValid
	}
	return nil
}

// array walks the array whose '[' is at i.
func (d *strictDecoder) array(i, depth int) (any, int, error) {
	var a []any
	if d.build {
		a = make([]any, 0)
	}
	var err error
	e, ok := d.Array(i, func(j int) (int, bool) {
		var v any
		var e int
		if v, e, err = d.value(j, depth); err != nil {
			return 0, false
		}
		if d.build {
			a = append(a, v)
		}
		return e, true
	})
	if !ok {
		return nil, 0, orNotValid(err)
	}
	if !d.build {
		return nil, e, nil
	}
	return a, e, nil
}

// smallObject is the number of keys up to which an object's duplicate
// check without build searches them linearly.
const smallObject = 16

// object walks the object whose '{' is at i.
func (d *strictDecoder) object(i, depth int) (any, int, error) {
	var (
		m    map[string]any
		set  map[string]struct{} // without build, beyond smallObject keys
		base = len(d.keys)
		err  error
	)
	if d.build {
		m = make(map[string]any)
	}
	defer func() { d.keys = d.keys[:base] }()
	e, ok := d.Object(i, func(key []byte, j int) (int, bool) {
		var dup bool
		switch {
		case d.build:
			_, dup = m[string(key)]
		case set != nil:
			_, dup = set[string(key)]
			set[string(key)] = struct{}{}
		default:
			for _, k := range d.keys[base:] {
				if dup = bytes.Equal(k, key); dup {
					break
				}
			}
			if d.keys = append(d.keys, key); len(d.keys)-base > smallObject {
				set = make(map[string]struct{}, 2*(len(d.keys)-base))
				for _, k := range d.keys[base:] {
					set[string(k)] = struct{}{}
				}
				d.keys = d.keys[:base]
			}
		}
		if dup {
			err = &SyntaxError{Msg: fmt.Sprintf("duplicate key %q in a JSON object", key)}
			return 0, false
		}
		var v any
		var e int
		if v, e, err = d.value(j, depth); err != nil {
			return 0, false
		}
		if d.build {
			m[d.key(key, j)] = v
		}
		return e, true
	})
	if !ok {
		return nil, 0, orNotValid(err)
	}
	if !d.build {
		return nil, e, nil
	}
	return m, e, nil
}

// key returns the key of the member whose value is at j as a string: a
// slice of s, without an allocation, when the text before the key's closing
// quote is the key itself (no escapes).
func (d *strictDecoder) key(key []byte, j int) string {
	b := d.B
	q := j - 1
	for q >= 0 && jsontext.IsSpace(b[q]) {
		q--
	}
	for q--; q >= 0 && jsontext.IsSpace(b[q]); q-- {
	}
	// b[q] is the closing quote (Object checked the ':' and the key).
	if k := q - len(key); k >= 0 && bytes.Equal(b[k:q], key) {
		return d.text(k, q)
	}
	return string(key)
}

func orNotValid(err error) error {
	if err == nil {
		return errNotValid
	}
	return err
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
