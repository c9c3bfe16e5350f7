package model

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendChangeEntry: a change-log entry is what a json.Encoder without
// HTML escaping writes for it, whatever its strings hold.
func TestAppendChangeEntry(t *testing.T) {
	strs := []string{"", "x", "<b>&</b>", `"\`, "\x00\n\x7f", "é😀", "\u2028", "bad \xff"}
	for i, a := range strs {
		for _, b := range strs {
			e := ChangeEntry{DatetimeLog: a, HasAgent: Agent{Name: b, EmailAddress: a + b, Role: "OWNER"},
				ChangedField: b, Description: strs[i%3] + b}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(&e); err != nil {
				t.Fatal(err)
			}
			if got := appendChangeEntry(nil, &e); !bytes.Equal(got, bytes.TrimSpace(want.Bytes())) {
				t.Fatalf("appendChangeEntry(%+v) = %s, want %s", e, got, want.Bytes())
			}
		}
	}
}
