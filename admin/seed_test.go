package admin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pidnode/handlev"
)

func TestSeedDemo(t *testing.T) {
	e := newEnv(t)
	info, err := e.srv.SeedDemo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Namespace != "DMO" || !wellFormedKey(info.Key) || len(info.Handles) != 5 || len(info.TestHandles) != 2 {
		t.Fatalf("demo info %+v", info)
	}
	statuses := map[handlev.Status]int{}
	for _, h := range append(info.Handles, info.TestHandles...) {
		k, _, err := e.namer.Key(h)
		if err != nil {
			t.Fatal(err)
		}
		en, err := e.cache.Get([]byte(k))
		if err != nil || !en.Found {
			t.Fatalf("%s: %v", h, err)
		}
		statuses[en.Record.Status()]++
	}
	if statuses[handlev.StatusRegistered] != 5 || statuses[handlev.StatusSubmitted] != 1 || statuses[handlev.StatusObsoleted] != 1 {
		t.Errorf("statuses %v", statuses)
	}
	k, _, _ := e.namer.Key(info.Handles[4])
	rec, _, _ := e.db.Load(k)
	prefix, ns, id := splitDisplay(info.Handles[0])
	if rel := string(valueAt(rec, 15)); !strings.Contains(rel, "IS_OBSOLETED_BY") || !strings.Contains(rel, prefix+"/"+ns+"/"+id) {
		t.Errorf("obsoleted record RELATED = %s", rel)
	}
	// The demo key works through the API; a second seed refuses.
	e.want(e.do("GET", "/pid/v2/me", info.Key, nil), 200)
	if _, err := e.srv.SeedDemo(context.Background()); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("second SeedDemo: %v, want ErrNotEmpty", err)
	}
}
