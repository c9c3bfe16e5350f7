package admin

import (
	"net/http"
	"testing"
)

// TestNamespaceTable: the table reserves exactly the ids its routes would
// take from identifiers, says so in its message, and dispatches each path
// to the route that serves it.
func TestNamespaceTable(t *testing.T) {
	e := newEnv(t)
	s := e.srv
	const wantMsg = `"bulk", "stats", "events", "linkcheck", "webhooks" and ids starting with "webhooks/" or ending in "/history", "/stats" or "/linkcheck" are reserved by the API`
	if got := s.snaaAPI.ns.reservedMsg(); got != wantMsg {
		t.Errorf("ns.reservedMsg() = %q, want %q", got, wantMsg)
	}
	for id, want := range map[string]bool{
		"bulk": true, "BULK": true, "stats": true, "events": true, "linkcheck": true, "webhooks": true, "Webhooks/x/y": true,
		"a/history": true, "a/b/Stats": true, "x/linkcheck": true, "history": true,
		"bulk/x": false, "events/x": false, "a/webhooks": false, "item-1": false, "a/historyx": false, "statsx": false,
	} {
		if got := s.snaaAPI.ns.reserved(id); got != want {
			t.Errorf("ns.reserved(%q) = %v, want %v", id, got, want)
		}
	}
	for _, c := range []struct {
		method, id, wantID string
		found              bool
	}{
		{"GET", "a/b/history", "a/b", true},
		{"GET", "STATS", "STATS", true},
		{"GET", "x/stats", "x", true},
		{"POST", "Bulk", "Bulk", true},
		{"GET", "bulk", "", false},
		{"PUT", "webhooks/w1", "webhooks/w1", true},
		{"DELETE", "x/history", "", false},
		{"GET", "x/HISTORY", "", false},
		{"GET", "item-1", "", false},
	} {
		_, id, ok := s.snaaAPI.ns.routeFor(c.method, c.id)
		if ok != c.found || id != c.wantID {
			t.Errorf("ns.routeFor(%s, %q) = %q, %v; want %q, %v", c.method, c.id, id, ok, c.wantID, c.found)
		}
	}
	if got := s.snaaAPI.ns.ops(http.MethodDelete, "/c/", "/c/{id}"); len(got) != 1 || got["/c/webhooks/{webhook_id}"].summary == "" {
		t.Errorf("ns.ops(DELETE) = %v, want the webhook endpoint only", got)
	}
}
