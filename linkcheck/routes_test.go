package linkcheck

import (
	"net/url"
	"testing"

	"pidnode/registry"
)

// The routes themselves are tested through the API that registers them
// (admin's TestLinkcheckRoutes and TestLinkcheckGolden), which checks the
// caller's key and namespace first.

// FuzzLinkcheckParams: the listing's parameters never panic and are either
// accepted or refused with a problem.
func FuzzLinkcheckParams(f *testing.F) {
	for _, s := range []string{"state=broken", "state=all&limit=2&cursor=MjEuMTIzNDU", "cursor=%00", "state=&state=x", "limit=99999999999999999999"} {
		f.Add(s, "text/csv;q=0.5, application/json")
	}
	f.Fuzz(func(t *testing.T, query, accept string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		st, p := linkcheckStates(q)
		if p == nil && len(st) > 1 && st[0] != registry.LinkBroken {
			t.Fatalf("states %v", st)
		}
		decodeLinkCursor(q.Get("cursor"))
		wantsCSV(accept)
	})
}
