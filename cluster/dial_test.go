package cluster

import (
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"pidnode/handlev"
	"pidnode/internal/etcdtest"
	"pidnode/registry"
	"pidnode/store"
)

func openTestDB(t testing.TB) (*store.DB, *registry.Registry) {
	t.Helper()
	return openTestDBAt(t, filepath.Join(t.TempDir(), "p.db"))
}

// openTestDBAt is openTestDB with the database file at path.
func openTestDBAt(t testing.TB, path string) (*store.DB, *registry.Registry) {
	t.Helper()
	db, err := store.Open(store.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: "21.12345", TestPrefix: "21.T12345"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{DB: db, Namer: namer, URLIndex: 1})
	if err != nil {
		t.Fatal(err)
	}
	return db, reg
}

// etcd's default limits (128 operations, 1.5 MiB) cannot take a bulk write:
// Dial names the setting.
func TestDialChecksLimits(t *testing.T) {
	db, reg := openTestDB(t)
	for _, tc := range []struct {
		opts    etcdtest.Options
		setting string
	}{
		{etcdtest.Options{}, "--max-txn-ops"},
		{etcdtest.Options{MaxTxnOps: RequiredTxnOps}, "--max-request-bytes"},
	} {
		c := etcdtest.Start(t, 1, tc.opts)
		_, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "n", DB: db, Registry: reg})
		var le *LimitError
		if !errors.As(err, &le) || le.Setting != tc.setting || !errors.Is(err, ErrLimits) {
			t.Errorf("Dial with %+v = %v, want a LimitError on %s", tc.opts, err, tc.setting)
		}
	}
}

func TestDialUnreachable(t *testing.T) {
	db, reg := openTestDB(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = Dial(Config{Endpoints: []string{"http://" + addr}, NodeName: "n", DB: db, Registry: reg, DialTimeout: 500 * time.Millisecond})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Dial of a closed port = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Dial took %v with a 500ms bound", d)
	}
}

// A database with data of its own does not become a replica.
func TestStartRefusesSingleNodeData(t *testing.T) {
	c := etcdtest.Start(t, 1, etcdtest.Options{MaxTxnOps: RequiredTxnOps, MaxRequestBytes: RequiredRequestBytes})
	db, reg := openTestDB(t)
	err := reg.Update(func(tx registry.Tx) error {
		return tx.PutRecord("21.12345/A", &store.Stored{Version: 1, Record: handlev.Record{Handle: "21.12345/A"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Dial(Config{Endpoints: []string{c.Endpoints()}, NodeName: "n", DB: db, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Start(t.Context()); !errors.Is(err, ErrNotReplica) {
		t.Fatalf("Start on a single node's data = %v, want ErrNotReplica", err)
	}
}
