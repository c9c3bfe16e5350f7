package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidnode/internal/etcdtest"
)

// TestClusterDurabilityOrder is TestDurabilityOrder for a node in cluster
// mode, where a write is durable once etcd has committed it
// (docs/product.md §8): for a create, an update, a bulk request and an
// operator write, strace shows, between the accept of the request's
// connection and the first byte of its 201/200 reply, the node sending a
// transaction to etcd and receiving etcd's answer to it.
//
// gRPC multiplexes every call on one HTTP/2 connection, and the node talks
// to etcd on its own too (a heartbeat read every second, watch progress
// requests), so "some send, then some receive" could be satisfied by other
// traffic. The test reads the HTTP/2 frames instead (RFC 9113 §4.1: strace
// prints the bytes of each call): each unary gRPC call opens a stream with a
// HEADERS frame and sends its message in DATA frames on that stream; a
// message that is a RangeRequest (a read: its first field is the key, which
// starts with the node's "/" prefix) is not a transaction. etcd's answer is a
// HEADERS or DATA frame on the same stream. So: at least one stream opened
// between the accept and the reply carries a transaction, and for every such
// stream etcd's frames are read before the reply's first byte.
func TestClusterDurabilityOrder(t *testing.T) {
	stracePath := requireStrace(t)
	c := etcdtest.Start(t, 1, clusterEtcd)
	var etcdPeers []string
	for _, e := range strings.Split(c.Endpoints(), ",") {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" {
			t.Fatalf("etcd endpoint %q: %v", e, err)
		}
		etcdPeers = append(etcdPeers, "->"+u.Host+"]>")
	}
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "trace")
	// Bytes are printed in full (a gRPC read is at most 32 KiB), so the
	// HTTP/2 frames on the etcd connection can be followed; only non-ASCII
	// bytes in hex keeps the HTTP/1.1 replies plain text and the trace
	// small.
	n := startNodeWrapped(t, filepath.Join(dir, "data"), []string{stracePath, "-f", "-yy", "-tt", "--strings-in-hex=non-ascii-chars", "-s", "65536", "-o", tracePath,
		"-e", "trace=accept4,connect,write,writev,sendto,sendmsg,read,readv,recvfrom,recvmsg"},
		append(clusterFlags(c, "dur"), "--demo")...)

	reqs := durableWrites(t, n)

	if code := n.stop(30 * time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit %d\nstderr:\n%s", code, n.stderr.String())
	}
	tr, err := parseTrace(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	isEtcd := func(fd string) bool {
		for _, p := range etcdPeers {
			if strings.HasSuffix(fd, p) {
				return true
			}
		}
		return false
	}
	for _, q := range reqs {
		if msg, err := tr.checkEtcdBeforeReply(isEtcd, q.port, q.status); err != nil {
			t.Errorf("%s: %v", q.what, err)
		} else {
			t.Logf("%s: %s", q.what, msg)
		}
	}
}

// checkEtcdBeforeReply checks the calls between the accept of the
// connection from clientPort and the first byte of its reply: a transaction
// sent to etcd on a new stream, and etcd's answer on that stream received
// before the reply.
func (tr *trace) checkEtcdBeforeReply(isEtcd func(fd string) bool, clientPort, status int) (string, error) {
	from, reply, err := tr.replyWindow(clientPort, status)
	if err != nil {
		return "", err
	}
	acceptLine, replyLine := tr.calls[from-1].line, tr.calls[reply].line
	// Streams the node opened in the window, and those whose first message
	// is a transaction rather than a read; the connection is part of a
	// stream's name.
	type streamID struct {
		conn string
		id   uint32
	}
	opened := map[streamID]int{} // → line of the send that opened it
	var txns []streamID
	answered := map[streamID]int{} // → line of the first read of etcd's frames on it
	type direction struct {
		conn string
		sent bool
	}
	framers := map[direction]*http2Framer{}
	framer := func(d direction) *http2Framer {
		if framers[d] == nil {
			framers[d] = &http2Framer{}
		}
		return framers[d]
	}
	for _, c := range tr.calls {
		if !isEtcd(c.fd) {
			continue
		}
		switch {
		case isWrite(c.name):
			fs := framer(direction{c.fd, true}).frames(c)
			if c.start <= acceptLine || c.start >= replyLine {
				continue
			}
			for _, f := range fs {
				s := streamID{c.fd, f.stream}
				switch f.typ {
				case 0x1: // HEADERS
					if _, ok := opened[s]; !ok {
						opened[s] = c.start
					}
				case 0x0: // DATA
					if _, ok := opened[s]; ok && isTxnRequest(f.payload) && !slices.Contains(txns, s) {
						txns = append(txns, s)
					}
				}
			}
		case isRead(c.name):
			for _, f := range framer(direction{c.fd, false}).frames(c) {
				s := streamID{c.fd, f.stream}
				if _, ok := answered[s]; !ok && (f.typ == 0x0 || f.typ == 0x1) && c.line > acceptLine {
					answered[s] = c.line
				}
			}
		}
	}
	if len(txns) == 0 {
		return "", fmt.Errorf("no transaction sent to etcd between the accept (trace line %d) and the %d reply (trace line %d); %d streams opened",
			acceptLine, status, replyLine, len(opened))
	}
	// Every transaction the node sent for the request is answered before
	// the reply (requests are sent one at a time, and nothing else in the
	// node writes to etcd in this test: no resolutions, no statistics).
	var msgs []string
	for _, s := range txns {
		at, ok := answered[s]
		switch {
		case !ok:
			return "", fmt.Errorf("the %d reply (trace line %d) is written before etcd answered the transaction sent on stream %d (trace line %d): no answer read",
				status, replyLine, s.id, opened[s])
		case at > replyLine:
			return "", fmt.Errorf("the %d reply (trace line %d) is written before etcd answered the transaction sent on stream %d (trace line %d): its answer is read at trace line %d",
				status, replyLine, s.id, opened[s], at)
		}
		msgs = append(msgs, fmt.Sprintf("transaction sent on stream %d (trace line %d), answer read (trace line %d)", s.id, opened[s], at))
	}
	return fmt.Sprintf("%s, before the %d reply (trace line %d)", strings.Join(msgs, "; "), status, replyLine), nil
}

func isRead(name string) bool {
	switch name {
	case "read", "readv", "recvfrom", "recvmsg":
		return true
	}
	return false
}

// isTxnRequest reports whether the gRPC message in a DATA frame's payload
// may be an etcd TxnRequest: not a RangeRequest, and starting with field 1
// (compares) or 2 (success operations), both length-delimited. The node's
// other unary calls, which it makes on its own (the heartbeat's AlarmList,
// Status, MemberList, lease grants), are empty or start with a varint
// field, and must not count as a write's transaction: under load one of
// them is sent in a write's window and answered after its reply.
func isTxnRequest(payload []byte) bool {
	return len(payload) > 5 && (payload[5] == 0x0a || payload[5] == 0x12) && !isRangeRequest(payload)
}

// isRangeRequest reports whether the gRPC message in a DATA frame's payload
// (a 5-byte length prefix, then the protobuf) is an etcd RangeRequest: its
// first field is field 1 (the key, length-delimited) and the key starts
// with "/". A TxnRequest's field 1 is a Compare, whose encoding cannot start
// with that byte (0x2f would be field 5 of wire type 7, which does not
// exist).
func isRangeRequest(payload []byte) bool {
	if len(payload) < 5+3 || payload[5] != 0x0a {
		return false
	}
	p := payload[6:]
	for len(p) > 0 && p[0]&0x80 != 0 { // the key's length, a varint
		p = p[1:]
	}
	return len(p) >= 2 && p[1] == '/'
}

type http2Frame struct {
	typ     byte
	stream  uint32
	payload []byte // as much of it as strace printed
}

// callBytes returns the count a read or write returned and the bytes strace
// printed of it (--strings-in-hex=non-ascii-chars: printable ASCII as is,
// C escapes for \t \n \v \f \r " and \\, \xNN for the rest).
func callBytes(c traceCall) (int, []byte) {
	total, err := strconv.Atoi(strings.SplitN(c.result, " ", 2)[0])
	if err != nil || total <= 0 {
		return 0, nil
	}
	s, ok := strings.CutPrefix(c.args, `, "`)
	if !ok {
		return total, nil
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			return total, b
		}
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		if i++; i == len(s) {
			break
		}
		switch s[i] {
		case 't':
			b = append(b, '\t')
		case 'n':
			b = append(b, '\n')
		case 'v':
			b = append(b, '\v')
		case 'f':
			b = append(b, '\f')
		case 'r':
			b = append(b, '\r')
		case 'x':
			if i+2 >= len(s) {
				return total, nil
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return total, nil
			}
			b = append(b, byte(v))
			i += 2
		default: // " and \
			b = append(b, s[i])
		}
	}
	return total, nil // no closing quote: not a string strace printed
}

// http2Framer follows the frame boundaries of the bytes one connection
// carries in one direction, across calls (a call may end inside a frame):
// skip is how much of the current frame is still to come. When a frame
// header falls beyond what strace printed, the boundaries are lost until a
// call whose bytes, from its start, are whole frames of known types ending
// exactly at its end; frames are reported only while the boundaries are
// known, so a lost answer fails the test and never passes it.
type http2Framer struct {
	skip    int
	started bool
	lost    bool
}

func (r *http2Framer) frames(c traceCall) []http2Frame {
	total, b := callBytes(c)
	if total == 0 {
		return nil
	}
	if !r.started && strings.HasPrefix(string(b), "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") {
		total, b = total-24, b[24:] // the client's connection preface (RFC 9113 §3.4)
	}
	r.started = true
	if r.lost {
		if !wholeFrames(b, total) {
			return nil
		}
		r.lost, r.skip = false, 0
	}
	var fs []http2Frame
	off := r.skip
	for off < total {
		if off+9 > len(b) {
			r.lost = true
			return fs
		}
		length := int(b[off])<<16 | int(b[off+1])<<8 | int(b[off+2])
		fs = append(fs, http2Frame{typ: b[off+3], stream: uint32(b[off+5]&0x7f)<<24 | uint32(b[off+6])<<16 | uint32(b[off+7])<<8 | uint32(b[off+8]),
			payload: b[off+9 : min(off+9+length, len(b))]})
		off += 9 + length
	}
	r.skip = off - total
	return fs
}

// wholeFrames reports whether all total bytes of a read, printed in full in
// b, are HTTP/2 frames of the types RFC 9113 §6 defines.
func wholeFrames(b []byte, total int) bool {
	if len(b) != total {
		return false
	}
	off := 0
	for off+9 <= total {
		if b[off+3] > 0x9 {
			return false
		}
		off += 9 + (int(b[off])<<16 | int(b[off+1])<<8 | int(b[off+2]))
	}
	return off == total
}
