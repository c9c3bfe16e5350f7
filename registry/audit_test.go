package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	"pidnode/store"
)

// TestAuditWithoutSeqRoundTrip: an entry written on one node, sent without
// its sequence number and applied on another with the number a cluster
// derives, is the entry the first node would have written with that number,
// and is indexed under its record.
func TestAuditWithoutSeqRoundTrip(t *testing.T) {
	db, namer := openTest(t)
	at := time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC)
	r, err := New(Config{DB: db, Namer: namer, URLIndex: 1, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	tail, err := AuditTail(&AuditEntry{Actor: "snaa-1", Action: ActHandleCreate, Target: "21.12345/ABC", After: "https://example.org/"})
	if err != nil {
		t.Fatal(err)
	}
	written := appendAudit(nil, 7, at, tail)
	bare, err := AuditWithoutSeq(written)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bare, []byte(`"seq"`)) {
		t.Fatalf("still numbered: %s", bare)
	}
	const seq = 123<<16 | 2
	if err := r.Update(func(tx Tx) error { return tx.ApplyAuditAt(seq, bare) }); err != nil {
		t.Fatal(err)
	}
	var got []byte
	var hist []AuditEntry
	err = r.View(func(tx Tx) error {
		got = append(got, tx.Bolt().Bucket(store.BucketAudit).Get(binary.BigEndian.AppendUint64(nil, seq))...)
		key, _, err := namer.Key("21.12345/ABC")
		if err != nil {
			return err
		}
		hist, err = tx.HandleAudit(key)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := appendAudit(nil, seq, at, tail); !bytes.Equal(got, want) {
		t.Errorf("applied entry\n%s\nwant\n%s", got, want)
	}
	if len(hist) != 1 || hist[0].Seq != seq {
		t.Errorf("history of the record: %+v", hist)
	}
}

// FuzzAuditWithoutSeq: any bytes either are refused or lose exactly their
// leading "seq" member, which ApplyAuditAt's numbering puts back.
func FuzzAuditWithoutSeq(f *testing.F) {
	for _, s := range []string{`{"seq":1,"time":"x","actor":"a"}`, `{"seq":12}`, `{"seq":}`, `{"seq":1`, `{}`, `{"seq":99999999999999999999,"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		out, err := AuditWithoutSeq(v)
		if err != nil {
			return
		}
		if len(out) == 0 || out[0] != '{' {
			t.Fatalf("%q → %q", v, out)
		}
		i := bytes.IndexAny(v, ",}")
		rest := v[i:]
		if rest[0] == ',' {
			rest = rest[1:]
		}
		if !bytes.Equal(out[1:], rest) {
			t.Fatalf("%q → %q: more than the seq member went", v, out)
		}
	})
}

// TestAuditTailBytes: AuditTail and AuditTailAfter write what json.Marshal
// writes for the entry's members, whatever its strings hold.
func TestAuditTailBytes(t *testing.T) {
	strs := []string{"", "snaa-1", "<b>&</b>", `"\`, "\x00\n\x7f", "é😀", "\u2028", "bad \xff", "21.12345/svc/K7Q/AB-CD"}
	ref := func(e *AuditEntry) []byte {
		b, err := json.Marshal(&struct {
			Actor   string `json:"actor"`
			KeyName string `json:"key_name,omitempty"`
			Action  string `json:"action"`
			Target  string `json:"target"`
			Before  any    `json:"before,omitempty"`
			After   any    `json:"after,omitempty"`
		}{e.Actor, e.KeyName, e.Action, e.Target, e.Before, e.After})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i, a := range strs {
		for j, k := range strs {
			e := &AuditEntry{Actor: a, KeyName: k, Action: strs[(i+j)%len(strs)], Target: k + a}
			if got, _ := AuditTail(e); !bytes.Equal(got, ref(e)) {
				t.Fatalf("AuditTail(%+v) = %s, want %s", e, got, ref(e))
			}
			for _, after := range []any{nil, "https://x.org/<a>", map[string]any{"url": k, "metadata": map[string]any{a: k}}} {
				var ab []byte
				if after != nil {
					ab, _ = json.Marshal(after)
				}
				got, _ := AuditTailAfter(e, ab)
				withAfter := *e
				withAfter.After = after
				if want := ref(&withAfter); !bytes.Equal(got, want) {
					t.Fatalf("AuditTailAfter(%+v, %s) = %s, want %s", e, ab, got, want)
				}
			}
		}
	}
}

// FuzzAuditHeadScanned: wherever the tokenizer's reading of an entry
// answers, it gives what the JSON decoder gives.
func FuzzAuditHeadScanned(f *testing.F) {
	at := time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC)
	for _, e := range []AuditEntry{
		{Actor: "snaa:snaa_a key:key_b", KeyName: "initial", Action: ActHandleCreate, Target: "21.12345/svc/K7Q/AB-CD", After: map[string]any{"url": "https://example.org/"}},
		{Actor: "op", Person: "a@b.example", Action: ActHandleUpdate, Target: "<b>&é</b>", Before: "x", After: "y"},
		{Actor: `"\`, Action: "bad \xff", Target: "\u2028"},
	} {
		tail, err := AuditTail(&e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(appendAudit(nil, 7, at, tail))
	}
	for _, s := range []string{`{"seq":1,"action":"a","target":"t"}`, `{"seq":1,"target":"t","action":"a","after":{}}`,
		`{"seq":1,"action":"a","action":"b","target":"t"}`, `{"seq":1,"seq":2,"action":"a","target":"t"}`, `{"seq":1, "action":"a","target":"t"}`,
		`{"seq":01,"action":"a","target":"t"}`, `{"seq":99999999999999999999,"action":"a","target":"t"}`, `{"seq":1,"x":2,"action":"a","target":"t"}`,
		`{"seq":1,"act\u0069on":"a","target":"t"}`, `{"seq":1,"action":"\u0061","target":"t"}`, `{"seq":1.5,"action":"a","target":"t"}`, `{"seq":1,"action":"a"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		fast, ok := auditHeadScanned(raw)
		if !ok {
			return
		}
		slow, err := auditHeadDecoded(raw)
		if err != nil || fast.Seq != slow.Seq || fast.Action != slow.Action || fast.Target != slow.Target {
			t.Fatalf("%q: scanned %d %q %q, decoded %d %q %q (%v)", raw, fast.Seq, fast.Action, fast.Target, slow.Seq, slow.Action, slow.Target, err)
		}
	})
}

// TestAuditHeadScanned: the entries this node writes are read without the
// decoder, and every member auditHead needs comes out as written.
func TestAuditHeadScanned(t *testing.T) {
	tail, err := AuditTail(&AuditEntry{Actor: "snaa:s key:k", KeyName: "initial", Action: ActHandleCreate, Target: "21.12345/svc/K7Q/AB-CD", After: map[string]any{"url": "https://example.org/"}})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := auditHeadScanned(appendAudit(nil, 42, time.Now(), tail))
	if !ok || e.Seq != 42 || e.Action != ActHandleCreate || e.Target != "21.12345/svc/K7Q/AB-CD" {
		t.Fatalf("got %+v, %v", e, ok)
	}
	if _, ok := auditHeadScanned([]byte(`{"seq":1,"action":"a","action":"b","target":"t"}`)); ok {
		t.Error("a repeated member was read without the decoder")
	}
}
