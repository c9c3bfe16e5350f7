package admin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pidnode/access"
	"pidnode/handlev"
	"pidnode/read"
)

func TestSeedDemo(t *testing.T) {
	e := newEnv(t)
	info, err := e.srv.SeedDemo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Namespace != "DMO" || !access.WellFormed(info.Key) || len(info.Handles) != 5 || len(info.TestHandles) != 2 {
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
	prefix, ns, id := read.SplitDisplay(info.Handles[0])
	if rel := string(valueAt(rec, 15)); !strings.Contains(rel, "IS_OBSOLETED_BY") || !strings.Contains(rel, prefix+"/"+ns+"/"+id) {
		t.Errorf("obsoleted record RELATED = %s", rel)
	}
	// The record with locations: its custom id, the 10320/loc value beside
	// the model's values, in the cache and public; an update through the API
	// keeps it.
	if info.LocHandle != testPrefix+"/svc/DMO/"+DemoLocID {
		t.Fatalf("LocHandle %q", info.LocHandle)
	}
	lk, _, _ := e.namer.Key(info.LocHandle)
	en, err := e.cache.Get([]byte(lk))
	if err != nil || !en.Found {
		t.Fatalf("%s: %v", info.LocHandle, err)
	}
	if loc := firstType(en.Public.Values, handlev.TypeLoc); loc != DemoLoc {
		t.Errorf("public 10320/loc of %s = %q, want DemoLoc", info.LocHandle, loc)
	}
	e.want(e.do("PUT", "/pid/v2/handles/"+testPrefix+"/DMO/"+DemoLocID, info.Key, map[string]any{"metadata": map[string]any{"status": "REGISTERED", "curation_contact": "other@example.org"}}), 200)
	rec, _, _ = e.db.Load(lk)
	if loc := firstType(rec.Values, handlev.TypeLoc); loc != DemoLoc {
		t.Errorf("after an update, 10320/loc = %q, want DemoLoc", loc)
	}
	// The demo key works through the API; a second seed refuses.
	e.want(e.do("GET", "/pid/v2/me", info.Key, nil), 200)
	if _, err := e.srv.SeedDemo(context.Background()); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("second SeedDemo: %v, want ErrNotEmpty", err)
	}
}

func firstType(vs []handlev.Value, typ string) string {
	for _, v := range vs {
		if v.Type == typ {
			return string(v.Data)
		}
	}
	return ""
}
