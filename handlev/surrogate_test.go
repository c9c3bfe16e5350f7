package handlev

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var surrogateCases = []struct {
	name string
	in   string
	want int
}{
	{"none", `{"a":"b\n\u00e9"}`, -1},
	{"no escapes", `{"a":"b"}`, -1},
	{"pair", `"\ud83d\ude00"`, -1},
	{"pair upper case", `"\uD83D\uDE00"`, -1},
	{"lone high", `"a\ud800"`, 2},
	{"lone high at end of input", `\ud800`, 0},
	{"lone low", `"\udc00"`, 1},
	{"high then non-surrogate escape", `"\ud800\u0041"`, 1},
	{"high then high then low", `"\ud800\ud800\udc00"`, 1},
	{"pair then low", `"\ud800\udc00\udc00"`, 13},
	{"high then raw char", `"\ud800x"`, 1},
	{"escaped backslash before u", `"\\ud800"`, -1},
	{"escaped backslash then lone", `"\\\ud800"`, 3},
	{"high then escaped backslash", `"\ud800\\udc00"`, 1},
	{"truncated escape", `"\ud8`, -1},
}

func TestFindLoneSurrogate(t *testing.T) {
	for _, c := range surrogateCases {
		if got := FindLoneSurrogate([]byte(c.in)); got != c.want {
			t.Errorf("%s: FindLoneSurrogate(%s) = %d, want %d", c.name, c.in, got, c.want)
		}
	}
}

// refLoneSurrogate is a second, independent reading of valid JSON: every
// string as its sequence of UTF-16 code units, checked pair by pair.
func refLoneSurrogate(b []byte) int {
	type unit struct {
		u   rune
		off int
	}
	check := func(us []unit) int {
		for i := 0; i < len(us); i++ {
			switch u := us[i].u; {
			case u >= 0xD800 && u < 0xDC00:
				if i+1 < len(us) && us[i+1].u >= 0xDC00 && us[i+1].u < 0xE000 {
					i++
					continue
				}
				return us[i].off
			case u >= 0xDC00 && u < 0xE000:
				return us[i].off
			}
		}
		return -1
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		var us []unit
		j := i + 1
		for b[j] != '"' {
			switch {
			case b[j] == '\\' && b[j+1] == 'u':
				var r rune
				for _, h := range b[j+2 : j+6] {
					d, _ := UnhexDigit(h)
					r = r<<4 | rune(d)
				}
				us = append(us, unit{r, j})
				j += 6
			case b[j] == '\\':
				us = append(us, unit{'x', j})
				j += 2
			default:
				_, n := utf8.DecodeRune(b[j:])
				us = append(us, unit{'x', j})
				j += n
			}
		}
		if off := check(us); off >= 0 {
			return off
		}
		i = j
	}
	return -1
}

func FuzzFindLoneSurrogate(f *testing.F) {
	for _, c := range surrogateCases {
		f.Add([]byte(c.in))
	}
	f.Add([]byte(`{"handle":"21.1/\ud800","values":[{"index":1,"type":"URL","data":"\udfff"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := FindLoneSurrogate(b) // any bytes: no panic
		if !json.Valid(b) {
			return
		}
		if want := refLoneSurrogate(b); got != want {
			t.Fatalf("FindLoneSurrogate(%q) = %d, reference %d", b, got, want)
		}
	})
}

// Handle JSON with a lone surrogate or invalid UTF-8 in a string is refused
// with an error naming the value and field, not stored as U+FFFD; a valid
// surrogate pair decodes to its character.
func TestDecodeRecordJSONSurrogates(t *testing.T) {
	rec := func(data string) []byte {
		return []byte(`{"handle":"21.1/X","values":[{"index":1,"type":"URL","data":"https://e.org/"},{"index":2,"type":"DESC","data":{"format":"string","value":"` + data + `"}}]}`)
	}
	_, vs, err := DecodeRecordJSON(rec(`smile \ud83d\ude00`))
	if err != nil || string(vs[1].Data) != "smile \U0001F600" {
		t.Fatalf("surrogate pair: %v, %+v", err, vs)
	}
	for _, bad := range []string{`\ud800`, `a\udc00b`, `\ud800\u0041`, "\xff"} {
		_, _, err := DecodeRecordJSON(rec(bad))
		var je *JSONError
		if !errors.As(err, &je) || je.Value != 1 || je.Field != "data.value" ||
			!(errors.Is(err, ErrLoneSurrogate) || errors.Is(err, ErrInvalidUTF8)) {
			t.Errorf("DecodeRecordJSON(%q) = %v, want a JSONError on value 1 data.value", bad, err)
		}
		if bad != "\xff" && !strings.Contains(err.Error(), "lone UTF-16 surrogate") {
			t.Errorf("error %q does not say why", err)
		}
	}
	if _, _, err := DecodeRecordJSON([]byte(`{"handle":"21.1/\udbff","values":[]}`)); !errors.Is(err, ErrLoneSurrogate) {
		t.Errorf("lone surrogate in the handle: %v", err)
	}
}
