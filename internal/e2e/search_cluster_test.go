package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"pidnode/internal/etcdtest"
)

// TestClusterSearchOnOtherNode: the list's search on node b finds a record
// created through node a (b's search index is kept by the transaction that
// applies the record), a finds it too (it applies its own writes alike), and after a's update of its label, b finds it by
// the new label's words and no more by the old one's.
func TestClusterSearchOnOtherNode(t *testing.T) {
	c := etcdtest.Start(t, 1, clusterEtcd)
	dir := t.TempDir()
	a := startNode(t, filepath.Join(dir, "a"), append(clusterFlags(c, "a"), "--demo")...)
	b := startNode(t, filepath.Join(dir, "b"), clusterFlags(c, "b")...)
	found := func(n *node, q string) []string {
		r := mustDo(t, "GET", n.adminURL()+testColl+"?q="+q, nil, "Authorization", "Bearer "+a.Key)
		if r.Status != http.StatusOK {
			t.Fatalf("search q=%s: %d %s", q, r.Status, r.Body)
		}
		var page struct{ Items []identifier }
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range page.Items {
			out = append(out, it.Handle)
		}
		return out
	}
	id := a.create(t, a.Key, payload("https://example.org/search/1", "REGISTERED", resourceInfo("Vanadium pentoxide", "catalyst")))
	waitUntil(t, func() bool { h := found(b, "vanad+pent"); return len(h) == 1 && h[0] == id.Handle })
	if h := found(a, "vanad+pent"); len(h) != 1 || h[0] != id.Handle {
		t.Errorf("a, which made the create, finds %q; want %s", h, id.Handle)
	}

	r := mustDo(t, "PUT", a.adminURL()+testColl+id.ID, payload("https://example.org/search/1", "REGISTERED", resourceInfo("Tungsten trioxide", "catalyst")), auth(a.Key)...)
	if r.Status != http.StatusOK {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	waitUntil(t, func() bool { h := found(b, "tungsten"); return len(h) == 1 && h[0] == id.Handle })
	if h := found(b, "vanadium"); len(h) != 0 {
		t.Errorf("b still finds the old label's word: %q", h)
	}
}
