package model

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// itemJSON is an item as compact JSON (map keys sorted), or "error: …".
func itemJSON(it BulkItem) string {
	if it.Err != nil {
		return "error: " + it.Err.Error()
	}
	b, _ := json.Marshal(it.Value)
	return string(b)
}

func TestDecodeBulkCSV(t *testing.T) {
	m := defaultModel(t)
	cases := []struct {
		name, csv string
		want      []string // one per item
		fail      string   // the whole body's error, if any
	}{
		{"create with fields and properties",
			"op,id,url,status,resource_info.label,resource_info.representation_variants,related_identifiers\n" +
				`create,A-1,https://x.example.org/a,REGISTERED,Zinc,"[{""variant_url"":""https://x.example.org/a.ttl""}]",` + "\n",
			[]string{`{"id":"A-1","metadata":{"resource_info":{"label":"Zinc","representation_variants":[{"variant_url":"https://x.example.org/a.ttl"}]},"status":"REGISTERED"},"op":"create","url":"https://x.example.org/a"}`}, ""},
		{"update sets only what its cells hold",
			"id,op,status,url\nB-2,UPDATE,DEPRECATED,\n",
			[]string{`{"id":"B-2","metadata":{"status":"DEPRECATED"},"op":"update"}`}, ""},
		{"a whole JSON field and a property over it",
			"op,resource_info,resource_info.label\n" + `create,"{""label"":""old"",""resource_category"":""SAMPLE""}",new` + "\n",
			[]string{`{"metadata":{"resource_info":{"label":"new","resource_category":"SAMPLE"}},"op":"create"}`}, ""},
		{"byte order mark and CRLF",
			"\xef\xbb\xbfop,id\r\ncreate,C\r\n",
			[]string{`{"id":"C","op":"create"}`}, ""},
		{"row errors stay in their row",
			"op,id,resource_info\ncopy,D,\ncreate,E,{not json\n,F,\ncreate,G,,extra\ncreate,\xff,\ncreate,H,\n",
			[]string{
				"error: model: invalid payload: op: must be create or update",
				"error: model: invalid payload: resource_info: is not JSON: " + syntaxMsg(t, "{not json"),
				"error: model: invalid payload: op: is empty; write create or update",
				"error: model: invalid payload: (row): has 4 cells, the header names 3 columns",
				"error: model: invalid payload: id: is not valid UTF-8",
				`{"id":"H","op":"create"}`,
			}, ""},
		{"unknown column", "op,colour\ncreate,red\n", nil, `CSV column "colour" is not one of the bulk format's: op, id, url, curation_contact`},
		{"property of a string field", "op,status.x\n", nil, `CSV column "status.x" is not one of`},
		{"column twice", "op,id,id\n", nil, `CSV column "id" is named twice`},
		{"no op column", "id,url\nA,https://x.example.org/\n", nil, "an op column is required"},
		{"bad quoting", "op,id\ncreate,\"A\n", nil, "CSV: line 2"},
		{"empty", "", nil, "the first row must name the columns"},
	}
	for _, c := range cases {
		items, err := m.DecodeBulkCSV([]byte(c.csv))
		if c.fail != "" {
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Msg, c.fail) {
				t.Errorf("%s: DecodeBulkCSV error %v, want a SyntaxError containing %q", c.name, err, c.fail)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: DecodeBulkCSV: %v", c.name, err)
			continue
		}
		if len(items) != len(c.want) {
			t.Errorf("%s: %d items, want %d", c.name, len(items), len(c.want))
			continue
		}
		for i, it := range items {
			if got := itemJSON(it); got != c.want[i] {
				t.Errorf("%s: item %d = %s\nwant %s", c.name, i, got, c.want[i])
			}
		}
	}
}

func syntaxMsg(t *testing.T, s string) string {
	t.Helper()
	_, err := DecodeAny([]byte(s))
	return strings.TrimPrefix(err.Error(), "model: ")
}

// The template names every column DecodeBulkCSV accepts, and reads back
// as a file without items.
func TestBulkTemplate(t *testing.T) {
	m := defaultModel(t)
	tpl := m.BulkTemplate()
	if !strings.HasPrefix(string(tpl), "op,id,url,curation_contact,status,") || !strings.Contains(string(tpl), ",resource_info,resource_info.label,") {
		t.Errorf("template = %q", tpl)
	}
	items, err := m.DecodeBulkCSV(tpl)
	if err != nil || len(items) != 0 {
		t.Errorf("DecodeBulkCSV(template) = %v, %v; want no items", items, err)
	}
}

func TestDecodeBulkJSON(t *testing.T) {
	items, err := DecodeBulkJSON([]byte("{\"op\":\"create\"}\n\n{\"id\":\"x\",\"url\":\"\\ud800\"}\n"), true)
	if err != nil || len(items) != 2 || items[0].Line != 1 || items[1].Line != 3 || items[1].Err == nil {
		t.Errorf("JSON Lines: %+v, %v", items, err)
	}
	if _, err := DecodeBulkJSON([]byte("{}\n{"), true); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("JSON Lines with a broken line 2: %v", err)
	}
	items, err = DecodeBulkJSON([]byte(`[{"id":"a"},{"id":"b"}]`), false)
	if err != nil || len(items) != 2 {
		t.Errorf("array: %+v, %v", items, err)
	}
	// A body not starting with '[' is JSON Lines: a string is one item,
	// which the write service fails as not an object.
	if items, err := DecodeBulkJSON([]byte(`"x"`), false); err != nil || len(items) != 1 || items[0].Value != "x" {
		t.Errorf(`DecodeBulkJSON("x") = %+v, %v; want one item "x"`, items, err)
	}
}

// No bytes make the CSV codec panic; every item it reads is an object with
// an op, or an error.
func FuzzBulkCSV(f *testing.F) {
	m := defaultModel(f)
	f.Add(m.BulkTemplate())
	f.Add([]byte("op,id,url,status,resource_info.label,resource_info\ncreate,A,https://x.example.org/,REGISTERED,l,\"{\"\"k\"\":1}\"\nupdate,B,,,,\n"))
	f.Add([]byte("\xef\xbb\xbfop\r\n\"create\"\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := m.DecodeBulkCSV(b)
		if err != nil {
			return
		}
		for _, it := range items {
			if it.Err != nil {
				continue
			}
			obj, ok := it.Value.(map[string]any)
			if !ok || (obj["op"] != OpCreate && obj["op"] != OpUpdate) {
				t.Fatalf("item %#v has no op", it.Value)
			}
		}
	})
}

// No bytes make the JSON codec panic; an item it reads is a value (JSON
// null included) or an error, never both.
func FuzzBulkJSON(f *testing.F) {
	f.Add([]byte(`[{"op":"create","url":"https://x.example.org/"}]`), false)
	f.Add([]byte("{\"op\":\"update\",\"id\":\"A\"}\n{\"id\":\"\\udc00\"}\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, lines bool) {
		items, err := DecodeBulkJSON(b, lines)
		if err != nil {
			return
		}
		for _, it := range items {
			if it.Err != nil && it.Value != nil {
				t.Fatalf("item %+v has both a value and an error", it)
			}
		}
	})
}
