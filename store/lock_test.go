package store

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// deadPID is far above any pid_max, so no process has it.
const deadPID = 1 << 30

// TestLockedNamesHolder: a second Open of a held file fails with a
// *LockedError carrying the holder's pid from the lock file.
func TestLockedNamesHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pidnode.db")
	openTest(t, path, true)
	b, err := os.ReadFile(LockFile(path))
	if err != nil {
		t.Fatalf("no lock file while open: %v", err)
	}
	if got := strings.TrimSpace(string(b)); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want this process's pid %d", got, os.Getpid())
	}
	_, err = Open(Config{Path: path})
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open error = %v, want *LockedError matching ErrLocked", err)
	}
	if le.Path != path || le.PID != os.Getpid() {
		t.Errorf("LockedError = %+v, want path %s pid %d", le, path, os.Getpid())
	}
	if want := "(pid " + strconv.Itoa(os.Getpid()) + ")"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	// The refused Open left the holder's lock file alone.
	if b2, _ := os.ReadFile(LockFile(path)); string(b2) != string(b) {
		t.Errorf("lock file after a refused open = %q, want %q", b2, b)
	}
}

// TestLockedHolderUnknown: when the lock file names no running process (or
// is not a pid), the error says the file is in use without a pid.
func TestLockedHolderUnknown(t *testing.T) {
	for _, content := range []string{strconv.Itoa(deadPID) + "\n", "garbage\n", "", "-5\n"} {
		path := filepath.Join(t.TempDir(), "pidnode.db")
		openTest(t, path, true)
		if err := os.WriteFile(LockFile(path), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(Config{Path: path})
		var le *LockedError
		if !errors.As(err, &le) || le.PID != 0 || strings.Contains(err.Error(), "(pid") {
			t.Errorf("lock file %q: second Open error = %v, want *LockedError without a pid", content, err)
		}
	}
}

// TestStaleLockFileDoesNotBlock: a lock file left by a crashed process, even
// one naming a running process, does not stop an Open; the new holder
// overwrites it and Close removes it.
func TestStaleLockFileDoesNotBlock(t *testing.T) {
	for _, content := range []string{strconv.Itoa(deadPID) + "\n", "1\n", strconv.Itoa(os.Getpid()) + "\n", "garbage"} {
		path := filepath.Join(t.TempDir(), "pidnode.db")
		if err := os.WriteFile(LockFile(path), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(Config{Path: path, NoSync: true})
		if err != nil {
			t.Fatalf("lock file %q left behind: Open = %v", content, err)
		}
		if b, _ := os.ReadFile(LockFile(path)); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
			t.Errorf("lock file %q: after Open it holds %q, want this process's pid", content, b)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(LockFile(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("lock file still there after Close: %v", err)
		}
	}
}

// TestLockFileRemovedOnRefusedOpen: an Open that fails after taking the
// flock (here: a schema newer than the binary) leaves no lock file.
func TestLockFileRemovedOnRefusedOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pidnode.db")
	db := openTest(t, path, true)
	err := db.Update(func(tx *Tx) error {
		return tx.Bolt().Bucket(BucketMeta).Put(metaSchemaKey, binary.BigEndian.AppendUint32(nil, SchemaVersion+1))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(Config{Path: path}); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
	}
	if _, err := os.Stat(LockFile(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left by a refused Open: %v", err)
	}
}
