package hdldns_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestTCPPipelineBeyond128 sends 200 queries back to back on one TCP
// connection (RFC 7766 §6.2.1 pipelining) and requires an answer to each:
// miekg/dns's default would close the connection after the 128th and drop
// the rest.
func TestTCPPipelineBeyond128(t *testing.T) {
	f := newFixture(t, nil)
	loadAnswerData(t, f)
	c, err := net.Dial("tcp", f.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	const n = 200
	var out []byte
	for i := range n {
		q := query(nameRef, dns.TypeTXT, 0)
		q.Id = uint16(i + 1)
		b, err := q.Pack()
		if err != nil {
			t.Fatal(err)
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(b)))
		out = append(out, b...)
	}
	go c.Write(out) //nolint:errcheck // the reads below report a broken connection
	r := bufio.NewReader(c)
	seen := make(map[uint16]bool, n)
	for len(seen) < n {
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		b := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		m := new(dns.Msg)
		if err := m.Unpack(b); err != nil {
			t.Fatalf("answer %d: %v", len(seen)+1, err)
		}
		if len(m.Answer) != 1 || seen[m.Id] {
			t.Fatalf("answer %d: id %d (seen before: %v), %d records, want 1", len(seen)+1, m.Id, seen[m.Id], len(m.Answer))
		}
		seen[m.Id] = true
	}
}
