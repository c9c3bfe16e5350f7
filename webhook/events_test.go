package webhook

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"pidnode/internal/route"
)

// The feed's route is tested through the API that registers it (admin's
// TestEvents…), which checks the caller's key and namespace first.

// FuzzEventParams: any query and Last-Event-ID either give a cursor and a
// limit in range, or a 400 naming one of the three parameters; never a panic.
func FuzzEventParams(f *testing.F) {
	for _, s := range [][2]string{{"after=12&limit=5", ""}, {"after=", "7"}, {"limit=1000", "18446744073709551615"},
		{"after=18446744073709551616", ""}, {"after=1&after=2", "x"}, {"limit=%00", " 3 "}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, rawQuery, lei string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		var hdr []string
		if lei != "" {
			hdr = []string{lei}
		}
		after, limit, err := eventParams(q, hdr)
		if err != nil {
			p, ok := err.(*route.Error)
			if !ok || p.Status != 400 || len(p.Fields) != 1 {
				t.Fatalf("%q %q: %+v", rawQuery, lei, err)
			}
			switch p.Fields[0].Field {
			case "after", "limit", "Last-Event-ID":
			default:
				t.Fatalf("%q %q: names %q", rawQuery, lei, p.Fields[0].Field)
			}
			return
		}
		if limit < 1 || limit > MaxEventLimit {
			t.Fatalf("%q %q: limit %d", rawQuery, lei, limit)
		}
		src := q.Get("after")
		if hdr != nil {
			src = strings.TrimSpace(lei)
		}
		if src != "" && strconv.FormatUint(after, 10) != strings.TrimLeft(src, "0") && !(after == 0 && strings.Trim(src, "0") == "") {
			t.Fatalf("%q %q: after %d", rawQuery, lei, after)
		}
	})
}
