package admin

import (
	"net/url"
	"strings"
	"testing"
)

// TestPathEscape: the escaping is url.PathEscape per segment.
func TestPathEscape(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := "a/" + string([]byte{byte(c)}) + "/b"
		parts := strings.Split(s, "/")
		for i, p := range parts {
			parts[i] = url.PathEscape(p)
		}
		if got, want := pathEscape(s), strings.Join(parts, "/"); got != want {
			t.Errorf("pathEscape(%q) = %q, want %q", s, got, want)
		}
	}
}
