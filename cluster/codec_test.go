package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	clientv3 "go.etcd.io/etcd/client/v3"

	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/registry"
	"pidnode/store"
)

// pid4catRecord is a record as the admin API writes one, in the store's
// encoding.
func pid4catRecord(t testing.TB, key string) []byte {
	t.Helper()
	changes := strings.Repeat(`{"datetime_log":"2026-11-28T01:27:28Z","has_agent":{"name":"Example Lab","email_address":"pids@lab.example.org","role":"OWNER"},"changed_field":"STATUS","description":"status set at creation"},`, 5)
	raw, err := store.EncodeStored(key, &store.Stored{Version: 1, Created: time.Unix(1764322048, 0).UTC(), Updated: time.Unix(1764322048, 0).UTC(), Record: handlev.Record{Handle: key, Values: []handlev.Value{
		{Index: 1, Type: "URL", Data: []byte("https://landing.example.org/items/" + key)},
		{Index: 2, Type: "EMAIL", Data: []byte("pids@lab.example.org")},
		{Index: 3, Type: "STATUS", Data: []byte("REGISTERED")},
		{Index: 4, Type: "RESOURCE", Data: []byte(`{"label":"Sample 1","description":"A catalyst sample","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://data.example.org/1.ttl","media_type":"text/turtle","encoding_format":"UTF-8","size":12345}]}`)},
		{Index: 5, Type: "CHANGES", Data: []byte("[" + strings.TrimSuffix(changes, ",") + "]")},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestValueRoundTrip(t *testing.T) {
	noise := make([]byte, 3000)
	rand.NewChaCha8([32]byte{1}).Read(noise)
	tests := []struct {
		name       string
		v          []byte
		compressed bool // stored as a frame, smaller than v
	}{
		{"empty", []byte{}, false},
		{"one byte", []byte{0}, false},
		{"uint64", binary.BigEndian.AppendUint64(nil, 7), false},
		{"record", pid4catRecord(t, "21.12345/ABC"), true},
		{"audit entry", []byte(`{"time":"2026-11-28T01:27:29.691340734Z","actor":"snaa:snaa_a7grwy88qc key:key_7xp8zzhvhe","key_name":"initial","action":"handle.create","target":"21.T12345/svc/PF7/MN1V-9EX3-5","after":{"metadata":{"curation_contact":"bench@lab.example.org","metadata_license":"CC0-1.0","status":"REGISTERED"},"url":"https://landing.example.org/bench/1/876"}}`), true},
		{"incompressible", noise, false},
		{"long run", bytes.Repeat([]byte("x"), 1<<20), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := encodeValue(tc.v)
			if got := bytes.HasPrefix(e, zstdMagic) && len(e) < len(tc.v); got != tc.compressed {
				t.Errorf("encodeValue: %d bytes from %d, compressed %v, want %v", len(e), len(tc.v), got, tc.compressed)
			}
			if !tc.compressed && !bytes.Equal(e, tc.v) {
				t.Errorf("encodeValue changed a value it did not compress")
			}
			d, err := decodeValue(e)
			if err != nil || !bytes.Equal(d, tc.v) {
				t.Fatalf("decodeValue(encodeValue(v)) = %d bytes, %v; want the %d bytes of v", len(d), err, len(tc.v))
			}
		})
	}
}

// A value that starts like a frame is always stored as one, so that it is
// not taken for one on the way back.
func TestValueLikeAFrame(t *testing.T) {
	for _, v := range [][]byte{zstdMagic, append(bytes.Clone(zstdMagic), 1, 2, 3)} {
		e := encodeValue(v)
		if bytes.Equal(e, v) {
			t.Fatalf("encodeValue(% x) stored it as it is", v)
		}
		if d, err := decodeValue(e); err != nil || !bytes.Equal(d, v) {
			t.Fatalf("decodeValue(encodeValue(% x)) = % x, %v", v, d, err)
		}
	}
}

func TestDecodeValueRefuses(t *testing.T) {
	good := encodeValue(pid4catRecord(t, "21.12345/ABC"))
	// A frame that declares 1 TiB of content (single segment, 8-byte
	// content size) and holds one raw byte.
	huge := append(bytes.Clone(zstdMagic), 0xe0)
	huge = binary.LittleEndian.AppendUint64(huge, 1<<40)
	huge = append(huge, 0x09, 0, 0, 'x')
	// A frame compressed with a dictionary this node does not have.
	other, err := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(zstdDictID+1, []byte(strings.Repeat("other dictionary ", 20))))
	if err != nil {
		t.Fatal(err)
	}
	foreign := other.EncodeAll([]byte(strings.Repeat("other dictionary ", 10)), nil)
	tests := []struct {
		name string
		v    []byte
		want error
	}{
		{"magic alone", zstdMagic, nil},
		{"truncated", good[:len(good)/2], nil},
		{"damaged", append(bytes.Clone(good[:8]), bytes.Repeat([]byte{0xff}, 40)...), nil},
		{"too large", huge, zstd.ErrDecoderSizeExceeded},
		{"unknown dictionary", foreign, zstd.ErrUnknownDictionary},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := decodeValue(tc.v)
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("decodeValue = %d bytes, %v; want error %v", len(d), err, tc.want)
			}
		})
	}
}

// FuzzDecodeValue: bytes from etcd never panic the decoder, and what
// decodes survives another round trip.
func FuzzDecodeValue(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte(`{"time":"2026-11-28T01:27:29Z","action":"handle.create"}`))
	f.Add(encodeValue(pid4catRecord(f, "21.12345/ABC")))
	f.Add(encodeValue(bytes.Repeat([]byte("ab"), 5000)))
	f.Add(append(bytes.Clone(zstdMagic), 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 0x09, 0, 0, 'x'))
	f.Fuzz(func(t *testing.T, v []byte) {
		d, err := decodeValue(v)
		if err != nil {
			return
		}
		if len(d) > maxValueBytes {
			t.Fatalf("decoded %d bytes, more than maxValueBytes", len(d))
		}
		d2, err := decodeValue(encodeValue(d))
		if err != nil || !bytes.Equal(d2, d) {
			t.Fatalf("round trip of %d decoded bytes: %d bytes, %v", len(d), len(d2), err)
		}
	})
}

// What etcd holds for a record and its audit entry is compressed; the
// node's file holds them as a single node writes them.
func TestValuesInEtcdCompressed(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	a := newTestNode(t, c, "a", filepath.Join(t.TempDir(), "a.db"))
	const key = "21.12345/BIG"
	raw := pid4catRecord(t, key)
	st, err := store.DecodeStored(raw)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Commit(func(tx registry.Tx) error {
		if err := tx.PutRecord(key, &st); err != nil {
			return err
		}
		return tx.Audit("test", registry.ActHandleCreate, key, nil, map[string]any{"url": "https://landing.example.org/items/" + key,
			"metadata": map[string]any{"status": "REGISTERED", "curation_contact": "pids@lab.example.org", "metadata_license": "CC0-1.0"}})
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var local, localAudit []byte
	a.db.View(func(tx *store.Tx) error {
		local = bytes.Clone(tx.Bolt().Bucket(store.BucketRecords).Get([]byte(key)))
		c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) == 8 {
				localAudit = bytes.Clone(v)
			}
		}
		return nil
	})
	if !bytes.Equal(local, raw) {
		t.Fatalf("the node's file holds %d bytes for the record, want the %d of its encoding", len(local), len(raw))
	}
	wantAudit, err := registry.AuditWithoutSeq(localAudit)
	if err != nil {
		t.Fatalf("the node's audit entry: %v", err)
	}
	for _, e := range []struct {
		prefix string
		want   []byte
	}{{DefaultPrefix + "records/", raw}, {DefaultPrefix + "audit/", wantAudit}} {
		r, err := c.Client().Get(t.Context(), e.prefix, clientv3.WithPrefix())
		if err != nil || len(r.Kvs) != 1 {
			t.Fatalf("etcd %s: %v, %d keys", e.prefix, err, len(r.Kvs))
		}
		v := r.Kvs[0].Value
		if !bytes.HasPrefix(v, zstdMagic) || len(v) >= len(e.want) {
			t.Errorf("etcd %s holds %d bytes (frame %v) for a %d-byte value, want a smaller frame", e.prefix, len(v), bytes.HasPrefix(v, zstdMagic), len(e.want))
		}
		if d, err := decodeValue(v); err != nil || !bytes.Equal(d, e.want) {
			t.Errorf("etcd %s decodes to %d bytes, %v; want the node's %d", e.prefix, len(d), err, len(e.want))
		}
	}
}

// Values written before compression, as they are, still apply: through
// the watch on a running node and through the snapshot of a new one.
func TestUncompressedValuesApply(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	dir := t.TempDir()
	a := newTestNode(t, c, "a", filepath.Join(dir, "a.db"))
	const key = "21.12345/OLD"
	raw := pid4catRecord(t, key)
	entry := []byte(`{"time":"2026-11-01T10:00:00Z","actor":"test","action":"handle.create","target":"21.12345/OLD","after":"https://landing.example.org/items/21.12345/OLD"}`)
	_, err := c.Client().Txn(t.Context()).Then(
		clientv3.OpPut(entryKey(DefaultPrefix, "records", []byte(key)), string(raw)),
		clientv3.OpPut(auditKey(DefaultPrefix, newAuditID(), 0), string(entry))).Commit()
	if err != nil {
		t.Fatal(err)
	}
	check := func(n *testNode) {
		t.Helper()
		var rec []byte
		var audit [][]byte
		n.db.View(func(tx *store.Tx) error {
			rec = bytes.Clone(tx.Bolt().Bucket(store.BucketRecords).Get([]byte(key)))
			c := tx.Bolt().Bucket(store.BucketAudit).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if len(k) == 8 {
					audit = append(audit, bytes.Clone(v))
				}
			}
			return nil
		})
		if !bytes.Equal(rec, raw) {
			t.Errorf("record in the file: %d bytes, want the %d written", len(rec), len(raw))
		}
		if len(audit) != 1 {
			t.Fatalf("audit entries in the file: %d, want 1", len(audit))
		}
		if got, err := registry.AuditWithoutSeq(audit[0]); err != nil || !bytes.Equal(got, entry) {
			t.Errorf("audit entry in the file: %s (%v), want %s with its seq", audit[0], err, entry)
		}
	}
	waitFor(t, func() bool { u, _ := a.url(t, key); return u != "" })
	check(a)
	b := newTestNode(t, c, "b", filepath.Join(dir, "b.db"))
	check(b)
}
