package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDurabilityOrder watches the kernel calls of a real node under strace and
// checks that an acknowledged write is on disk before the client hears of it
// (docs/product.md §8: every acknowledged write is fsynced before the reply):
// for a create, an update, a bulk request and an operator write (an SNAA
// application and its approval), the commit's data pages written to the bbolt
// file are synced (fdatasync or fsync on that file) before its meta page is
// written, the meta page is synced in turn, and both happen before the first
// byte of the 201/200 reply on that request's connection.
//
// The crash test cannot see this: SIGKILL leaves the page cache, so a dropped
// sync still passes there. strace's -yy names every fd by what it is (the
// database file's path; a TCP socket's two endpoints, so a reply is tied to
// the client's own connection by its local port).
func TestDurabilityOrder(t *testing.T) {
	stracePath := requireStrace(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	tracePath := filepath.Join(dir, "trace")
	n := startNodeWrapped(t, data, []string{stracePath, "-f", "-yy", "-tt", "-s", "64", "-o", tracePath,
		"-e", "trace=accept4,fsync,fdatasync,write,pwrite64,pwritev,writev,sendto,sendmsg"}, "--demo")
	dbPath, err := filepath.Abs(filepath.Join(data, "pidnode.db"))
	if err != nil {
		t.Fatal(err)
	}

	reqs := durableWrites(t, n)

	if code := n.stop(30 * time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit %d\nstderr:\n%s", code, n.stderr.String())
	}
	tr, err := parseTrace(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if err := tr.checkDurableReply(dbPath, q.port, q.status); err != nil {
			t.Errorf("%s: %v", q.what, err)
		} else {
			t.Logf("%s: commit synced before the %d reply on the client's connection (port %d)", q.what, q.status, q.port)
		}
	}
}

// durableReq is one acknowledged write of durableWrites: what it was, the
// client's local port (which names its connection in the trace) and the
// status it got.
type durableReq struct {
	what   string
	port   int
	status int
}

// durableWrites sends a create, an update, a bulk request and an operator
// write (an SNAA application and its approval) to n, each on its own
// connection, one at a time, so the trace between the connection's accept
// and its reply holds the request's commit.
func durableWrites(t *testing.T, n *node) []durableReq {
	t.Helper()
	var reqs []durableReq
	send := func(what, method, url string, body []byte, want int, hdr ...string) reply {
		t.Helper()
		var port int
		c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err == nil {
					port = conn.LocalAddr().(*net.TCPAddr).Port
				}
				return conn, err
			},
		}}
		r, err := do(c, method, url, body, hdr...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if r.Status != want {
			t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, want)
		}
		reqs = append(reqs, durableReq{what, port, want})
		return r
	}

	a := n.adminURL()
	r := send("create", "POST", a+testColl, payload("https://example.org/durable/1", "REGISTERED", resourceInfo("durable", "strace")), 201, auth(n.Key)...)
	var id identifier
	if err := json.Unmarshal(r.Body, &id); err != nil {
		t.Fatal(err)
	}
	up, _ := json.Marshal(map[string]any{"url": "https://example.org/durable/2"})
	send("update", "PUT", a+testColl+id.ID, up, 200, append(auth(n.Key), "If-Match", etag(id.Version))...)
	bulk, _ := json.Marshal([]json.RawMessage{
		payload("https://example.org/durable/bulk/1", "REGISTERED", resourceInfo("bulk 1", "strace")),
		payload("https://example.org/durable/bulk/2", "REGISTERED", resourceInfo("bulk 2", "strace")),
	})
	send("bulk", "POST", a+testColl+"bulk", bulk, 200, auth(n.Key)...)
	op := n.operatorKey()
	app, _ := json.Marshal(map[string]any{
		"organisation": "Durable Lab", "technical_contact": map[string]string{"name": "T", "email": "t@example.org"},
		"administrative_contact": map[string]string{"name": "A", "email": "a@example.org"}, "policy_version": "v1",
		"maintenance_statement": "kept"})
	r = send("operator: submit application", "POST", a+"/ops/v1/applications", app, 201, auth(op)...)
	var application struct{ ID string }
	if err := json.Unmarshal(r.Body, &application); err != nil || application.ID == "" {
		t.Fatalf("application reply: %v: %s", err, r.Body)
	}
	send("operator: approve application", "POST", a+"/ops/v1/applications/"+application.ID+"/approve", []byte(`{"namespace":"DUR"}`), 200, auth(op)...)
	return reqs
}

// requireStrace returns strace's path. Missing strace fails the test (make test
// installs Debian's package); a host that refuses ptrace (a container without
// CAP_SYS_PTRACE, a seccomp profile) skips it, since nothing here can fix that.
func requireStrace(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("strace")
	if err != nil {
		t.Fatalf("strace not found (%v): install it (make test does: apt-get install strace)", err)
	}
	out, err := exec.Command(p, "-f", "-o", "/dev/null", "-e", "trace=write", "true").CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "Operation not permitted") || strings.Contains(string(out), "PTRACE_TRACEME") {
			t.Skipf("strace cannot trace on this host (ptrace refused): %s", strings.TrimSpace(string(out)))
		}
		t.Fatalf("strace -f true: %v\n%s", err, out)
	}
	return p
}

// traceCall is one completed system call from an strace -f -yy log.
type traceCall struct {
	line   int    // 1-based line of the call's start (a reply's first byte) or end (a sync, a pwrite)
	start  int    // 1-based line of the call's start
	name   string // fdatasync, pwrite64, write, …
	fd     string // the fd as -yy prints it: 7</path/to/file> or 9<TCP:[a:p->b:q]>
	args   string // everything after the fd
	result string
}

type trace struct {
	calls []traceCall
}

var (
	traceLineRE = regexp.MustCompile(`^(\d+) +\d\d:\d\d:\d\d\.\d+ (.*)$`)
	callRE      = regexp.MustCompile(`^([a-z0-9_]+)\((\d+<.*?>)((?:, .*)?)\) += (.*)$`) // -yy's fd may hold "->"
	resumedRE   = regexp.MustCompile(`^<\.\.\. ([a-z0-9_]+) resumed>(.*)$`)
	pwriteRE    = regexp.MustCompile(`, (\d+), (\d+)$`)
	replyRE     = regexp.MustCompile(`"HTTP/1\.1 (\d{3}) `)
)

// parseTrace reads an strace -f -tt -yy log, joining each call split by
// another thread ("<unfinished ...>" then "<... name resumed>").
func parseTrace(path string) (*trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type open struct {
		line int
		text string
	}
	unfinished := map[string]open{} // by thread id
	tr := &trace{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for ln := 1; sc.Scan(); ln++ {
		m := traceLineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tid, body := m[1], m[2]
		start := ln
		if rest, ok := strings.CutSuffix(body, " <unfinished ...>"); ok {
			unfinished[tid] = open{ln, rest}
			continue
		}
		if rm := resumedRE.FindStringSubmatch(body); rm != nil {
			o, ok := unfinished[tid]
			if !ok {
				continue // started before the trace began
			}
			delete(unfinished, tid)
			body, start = o.text+rm[2], o.line
		}
		cm := callRE.FindStringSubmatch(body)
		if cm == nil {
			continue // a signal, an exit, a call on no fd
		}
		c := traceCall{line: ln, start: start, name: cm[1], fd: cm[2], args: cm[3], result: cm[4]}
		if replyRE.MatchString(c.args) {
			c.line = start // a reply counts from its first byte
		}
		tr.calls = append(tr.calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(tr.calls) == 0 {
		return nil, fmt.Errorf("%s: no system calls traced", path)
	}
	return tr, nil
}

// replyWindow finds the first write on the connection from the client's
// port clientPort, which must be an HTTP reply with the status the client
// saw, and the accept of that connection before it: the calls from index
// from up to (not including) index reply are the request's.
func (tr *trace) replyWindow(clientPort, status int) (from, reply int, err error) {
	connSuffix := fmt.Sprintf("->127.0.0.1:%d]>", clientPort)
	reply = -1
	for i, c := range tr.calls {
		if strings.HasSuffix(c.fd, connSuffix) && isWrite(c.name) {
			m := replyRE.FindStringSubmatch(c.args)
			if m == nil {
				return 0, 0, fmt.Errorf("the first write on the client's connection (trace line %d) is not an HTTP reply: %s%s", c.line, c.fd, c.args)
			}
			if m[1] != strconv.Itoa(status) {
				return 0, 0, fmt.Errorf("the reply on the client's connection (trace line %d) is %s, the client saw %d", c.line, m[1], status)
			}
			reply = i
			break
		}
	}
	if reply < 0 {
		return 0, 0, fmt.Errorf("no write on a connection from port %d in the trace", clientPort)
	}
	// The window: from the accept of the client's connection to the reply.
	from = -1
	for i := reply - 1; i >= 0; i-- {
		if tr.calls[i].name == "accept4" && strings.HasSuffix(tr.calls[i].result, connSuffix) {
			from = i + 1
			break
		}
	}
	if from < 0 {
		return 0, 0, fmt.Errorf("no accept4 of the connection from port %d before its reply (trace line %d)", clientPort, tr.calls[reply].line)
	}
	return from, reply, nil
}

// checkDurableReply finds the reply on the connection from the client's port
// clientPort and checks the database file's calls between the connection's
// accept and that reply: at least one commit (a meta page written),
// every data page synced before a meta page is written, and every write to
// the file synced before the reply's first byte.
func (tr *trace) checkDurableReply(dbPath string, clientPort, status int) error {
	dbFD := "<" + dbPath + ">"
	from, reply, err := tr.replyWindow(clientPort, status)
	if err != nil {
		return err
	}
	pageSize := int64(os.Getpagesize()) // bbolt's default page size
	var dataDirty, metaDirty bool
	var dataWrites, metaWrites, syncs int
	for _, c := range tr.calls[from:reply] {
		if !strings.HasSuffix(c.fd, dbFD) || strings.HasPrefix(c.result, "-1") {
			continue
		}
		switch c.name {
		case "fsync", "fdatasync":
			syncs++
			dataDirty, metaDirty = false, false
		case "pwrite64":
			m := pwriteRE.FindStringSubmatch(c.args)
			if m == nil {
				return fmt.Errorf("trace line %d: cannot read pwrite64's count and offset: %s", c.line, c.args)
			}
			size, _ := strconv.ParseInt(m[1], 10, 64)
			off, _ := strconv.ParseInt(m[2], 10, 64)
			// bbolt's two meta pages are pages 0 and 1; a commit writes one
			// of them last, alone.
			if size == pageSize && (off == 0 || off == pageSize) {
				if dataDirty {
					return fmt.Errorf("trace line %d: the meta page is written before the commit's data pages are synced", c.line)
				}
				metaWrites++
				metaDirty = true
			} else {
				dataWrites++
				dataDirty = true
			}
		default:
			return fmt.Errorf("trace line %d: %s on the database file, which bbolt writes with pwrite64 only", c.line, c.name)
		}
	}
	switch {
	case metaWrites == 0:
		return fmt.Errorf("no commit (meta page write) to %s between the accept and the reply (trace lines %d to %d)", dbPath, tr.calls[from-1].line, tr.calls[reply].line)
	case dataDirty || metaDirty:
		return fmt.Errorf("the reply (trace line %d) is written before the commit is synced: %d data and %d meta page writes, %d syncs",
			tr.calls[reply].line, dataWrites, metaWrites, syncs)
	case syncs < 2:
		return fmt.Errorf("%d syncs of %s before the reply (trace line %d), want the data's and the meta page's", syncs, dbPath, tr.calls[reply].line)
	}
	return nil
}

func isWrite(name string) bool {
	switch name {
	case "write", "writev", "sendto", "sendmsg", "pwrite64", "pwritev":
		return true
	}
	return false
}
