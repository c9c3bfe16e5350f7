package model

import (
	"regexp"
	"strings"
	"testing"
)

// TestMatchMemo: remembered verdicts are the regexp's, for strings that
// share slots and for long strings that are not remembered.
func TestMatchMemo(t *testing.T) {
	s := &Schema{Type: "string", Pattern: `^[a-z]+/[a-z]+$`}
	s.re = regexp.MustCompile(s.Pattern)
	s.matched = new(matchMemo)
	var strs []string
	for i := 0; i < 500; i++ {
		strs = append(strs, "text/"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "Bad"+string(rune('a'+i%26)))
	}
	strs = append(strs, "a/"+strings.Repeat("b", 300), "a/"+strings.Repeat("b", 300)+"1")
	for round := 0; round < 3; round++ {
		for _, str := range strs {
			if got, want := s.matches(str), s.re.MatchString(str); got != want {
				t.Fatalf("matches(%q) = %v, regexp says %v", str, got, want)
			}
		}
	}
}
