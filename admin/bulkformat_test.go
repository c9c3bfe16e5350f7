package admin

import (
	"strings"
	"testing"
)

// The bulk route reads the bulk CSV (one column per model field) and
// JSON Lines with op: a create makes the id, an update of an unknown id
// fails that row in words and creates nothing, a create of a taken id
// fails too; the reply counts created, updated and failed items.
func TestBulkFormatOps(t *testing.T) {
	e := newEnv(t)
	a := e.snaa(map[string]any{"namespace": "BLK", "custom_ids": true})
	bulk := "/pid/v2/handles/21.12345/BLK/bulk"
	csvBody := "op,id,url,status,curation_contact,schema_version,metadata_license,resource_info.label,resource_info.resource_category,resource_info.representation_variants\n" +
		`create,ROW-1,https://csv.example.org/1,REGISTERED,c@example.org,v1.0.1,CC0-1.0,Cobalt,SAMPLE,"[{""variant_url"":""https://csv.example.org/1.ttl""}]"` + "\n" +
		"update,NOPE-9,https://csv.example.org/9,,,,,,,\n" +
		"update,ROW-1,,DEPRECATED,,,,,,\n"
	before := e.recordCount()
	var sum BulkSummary
	e.want(e.do("POST", bulk, a.Key.Secret, csvBody, "Content-Type", "text/csv"), 200).json(t, &sum)
	if len(sum.Items) != 3 || sum.Created != 1 || sum.Updated != 1 || sum.Failed != 1 {
		t.Fatalf("CSV bulk summary %+v, want 1 created, 1 updated, 1 failed", sum)
	}
	if it := sum.Items[1]; it.Status != 404 || !strings.Contains(it.Detail, "NOPE-9") || !strings.Contains(it.Detail, "op create") {
		t.Errorf("update of an unknown id: %+v; want 404 naming the id and op create", it)
	}
	if n := e.recordCount(); n != before+1 {
		t.Errorf("records %d → %d; the unknown id's update must create nothing", before, n)
	}
	var ident Identifier
	e.want(e.do("GET", "/pid/v2/handles/21.12345/BLK/ROW-1", a.Key.Secret, nil), 200).json(t, &ident)
	if ident.Metadata["status"] != "DEPRECATED" || ident.Metadata["resource_info"].(map[string]any)["label"] != "Cobalt" {
		t.Errorf("ROW-1 after the CSV bulk: %+v", ident.Metadata)
	}

	// JSON Lines with op: a create of a taken id fails, an op that is
	// neither fails, an update without id fails.
	lines := `{"op":"create","id":"ROW-1","url":"https://csv.example.org/x"}` + "\n" +
		`{"op":"upsert","id":"ROW-1"}` + "\n" +
		`{"op":"update","url":"https://csv.example.org/y"}` + "\n" +
		`{"op":"update","id":"ROW-1","url":"https://csv.example.org/moved"}` + "\n"
	e.want(e.do("POST", bulk, a.Key.Secret, lines, "Content-Type", "application/jsonl"), 200).json(t, &sum)
	got := []int{}
	for _, it := range sum.Items {
		got = append(got, it.Status)
	}
	if want := []int{409, 422, 422, 200}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] || sum.Failed != 3 || sum.Updated != 1 {
		t.Errorf("JSON Lines statuses %v (%+v), want %v", got, sum, want)
	}

	// A CSV header naming no column of the format fails the whole body.
	p := e.want(e.do("POST", bulk, a.Key.Secret, "op,colour\ncreate,red\n", "Content-Type", "text/csv"), 400).problem(t)
	if !strings.Contains(p.Detail, `"colour"`) {
		t.Errorf("unknown column: %q", p.Detail)
	}
}
