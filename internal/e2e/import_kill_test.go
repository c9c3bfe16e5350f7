package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// importKillLines writes n import lines for handles 21.T11148/K<i> (i from
// first, step 1) whose URL says which import wrote them.
func importKillLines(t *testing.T, file string, first, n int, tag string) {
	t.Helper()
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, `{"handle":"21.T11148/K%07d","values":[{"index":1,"type":"URL","data":"https://example.org/%s"}]}`+"\n", i, tag)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func pidnodeExport(t *testing.T, data string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(binPath, "export", "--data", data, "--extra-prefix", "21.T11148")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("pidnode export: %v\n%s", err, errb.Bytes())
	}
	return out.Bytes()
}

// A `pidnode import` killed (SIGKILL) while it writes leaves the database as
// it was before the import: it opens, and exports the same bytes.
func TestImportKilledWhileWriting(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	first := filepath.Join(dir, "first.jsonl")
	importKillLines(t, first, 0, 2000, "first")
	if out, err := exec.Command(binPath, "import", "--data", data, "--extra-prefix", "21.T11148", first).CombinedOutput(); err != nil {
		t.Fatalf("pidnode import: %v\n%s", err, out)
	}
	want := pidnodeExport(t, data)
	db := filepath.Join(data, "pidnode.db")
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()

	// Replaces the first import's records and adds many more. The kill comes
	// once the import has written a few MB into the fresh file or, were it
	// written in place, more than a transaction's worth (50,000 records)
	// into the database itself; a larger input if the import finished
	// before that.
	for n := 200_000; ; n *= 2 {
		if n > 800_000 {
			t.Fatal("every import finished before it had written a few MB")
		}
		second := filepath.Join(dir, "second.jsonl")
		importKillLines(t, second, 0, n, "second")
		cmd := exec.Command(binPath, "import", "--data", data, "--extra-prefix", "21.T11148", second)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		killed := false
	poll:
		for {
			select {
			case err := <-exited:
				t.Logf("import of %d records ended before the kill (%v)", n, err)
				break poll
			case <-time.After(time.Millisecond):
			}
			fresh, _ := os.Stat(db + ".import")
			cur, _ := os.Stat(db)
			if (fresh != nil && fresh.Size() >= 4<<20) || (cur != nil && cur.Size() >= size+12<<20) {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-exited
				killed = true
				break
			}
		}
		if !killed {
			// The import went through: start again from the first one.
			os.RemoveAll(data)
			if out, err := exec.Command(binPath, "import", "--data", data, "--extra-prefix", "21.T11148", first).CombinedOutput(); err != nil {
				t.Fatalf("pidnode import: %v\n%s", err, out)
			}
			want = pidnodeExport(t, data)
			continue
		}
		break
	}
	if got := pidnodeExport(t, data); !bytes.Equal(got, want) {
		t.Errorf("after the killed import, export has %d bytes, want the %d of before", len(got), len(want))
	}
	if _, err := os.Stat(db + ".import"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed import's file is still there after the next open: %v", err)
	}
}
