package suite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// Verdict is the like-for-like check's word on one baseline server: OK with
// a note (sizes, body), or NA with the reason its ratio is not reported.
type Verdict struct {
	OK    bool
	Note  string
	NA    string
	Bytes string // the first response's size ("1087 bytes")
}

// lflNames maps bench/cmd/likeforlike check's server names to the suite's.
var lflNames = map[string]Server{
	"pidnode":              Pidnode,
	"nginx":                NginxLFL,
	"fasthttp map":         MapLFL,
	"nginx minimal":        NginxMin,
	"fasthttp map minimal": MapMin,
}

// parseCheck reads bench/cmd/likeforlike check's standard output: one line
// per server, "NAME<TAB>VERDICT[<TAB>REST]", the verdict "reference",
// "minimal", "ok" (REST: the note) or "n/a: …" (the reason).
func parseCheck(out []byte) map[Server]Verdict {
	m := map[Server]Verdict{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fs := strings.SplitN(sc.Text(), "\t", 3)
		srv, ok := lflNames[fs[0]]
		if !ok || len(fs) < 2 {
			continue
		}
		rest := ""
		if len(fs) == 3 {
			rest = fs[2]
		}
		switch v := fs[1]; {
		case v == "ok":
			m[srv] = Verdict{OK: true, Note: rest}
		case v == "reference" || v == "minimal":
			m[srv] = Verdict{Bytes: rest}
		case strings.HasPrefix(v, "n/a"):
			m[srv] = Verdict{NA: v}
		}
	}
	return m
}

// replyDiff compares a native-protocol reply (envelope + message) from the
// baseline with pidnode's, byte for byte, with the fields that may differ
// set aside: the envelope's RequestId (each exchange's own) and the header's
// ExpirationTime (pidnode's is now + 12 h, the baseline's the time of
// capture). Empty when they are the same.
func replyDiff(ref, other []byte) string {
	const expAt = hsmsg.EnvelopeLen + 16 // the header's ExpirationTime
	if len(ref) != len(other) {
		return fmt.Sprintf("sizes differ: %d vs %d bytes", len(other), len(ref))
	}
	if len(ref) < hsmsg.EnvelopeLen+hsmsg.HeaderLen {
		return fmt.Sprintf("reply of %d bytes is shorter than an envelope and a header", len(ref))
	}
	for i := range ref {
		if ref[i] == other[i] || (i >= 8 && i < 12) || (i >= expAt && i < expAt+4) {
			continue
		}
		where := "message"
		switch {
		case i < hsmsg.EnvelopeLen:
			where = "envelope"
		case i < hsmsg.EnvelopeLen+hsmsg.HeaderLen:
			where = "header"
		}
		return fmt.Sprintf("bytes differ at offset %d (%s)", i, where)
	}
	return ""
}

// resolveRaw resolves handle over TCP as bench/cmd/hdlload does and returns
// the reply's envelope and message bytes.
func resolveRaw(addr, handle string) ([]byte, error) {
	c := &hdl.Client{Addr: addr, Timeout: 5 * time.Second}
	r, err := c.Resolve(context.Background(), handle, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	return append(hsmsg.AppendEnvelope(nil, &r.Envelope), r.Raw...), nil
}

// nativeCheck compares the native map's replies with pidnode's for the first
// n distinct handles of paths, and returns the verdict and the markdown
// table of the first reply's bytes.
func nativeCheck(pidnode, native, paths string, n int) (Verdict, string) {
	hs, err := distinctHandles(paths, n)
	if err != nil || len(hs) == 0 {
		return Verdict{NA: fmt.Sprintf("n/a: no handles in %s (%v)", paths, err)}, ""
	}
	var first []byte
	for i, h := range hs {
		ref, err := resolveRaw(pidnode, h)
		if err != nil {
			return Verdict{NA: "n/a: pidnode: " + err.Error()}, ""
		}
		got, err := resolveRaw(native, h)
		if err != nil {
			return Verdict{NA: "n/a: native map: " + err.Error()}, ""
		}
		if d := replyDiff(ref, got); d != "" {
			return Verdict{NA: fmt.Sprintf("n/a: %s (%s)", d, h)}, ""
		}
		if i == 0 {
			first = ref
		}
	}
	note := fmt.Sprintf("same reply bytes (RequestId and ExpirationTime set aside) for %d distinct handles; %d bytes", len(hs), len(first))
	md := fmt.Sprintf("### native protocol over TCP (OC_RESOLUTION): `%s` (%d distinct handles of the stream compared, bytes of the first)\n\n"+
		"| server | envelope | header | body and credential | total | against pidnode |\n|---|---:|---:|---:|---:|---|\n"+
		"| pidnode | %d | %d | %d | %d | reference |\n| native map | %d | %d | %d | %d | %s |\n\n",
		hs[0], len(hs), hsmsg.EnvelopeLen, hsmsg.HeaderLen, len(first)-hsmsg.EnvelopeLen-hsmsg.HeaderLen, len(first),
		hsmsg.EnvelopeLen, hsmsg.HeaderLen, len(first)-hsmsg.EnvelopeLen-hsmsg.HeaderLen, len(first), note)
	return Verdict{OK: true, Note: note, Bytes: fmt.Sprintf("%d bytes", len(first))}, md
}

// distinctHandles returns the first n distinct handles of a request stream
// (paths without their leading slash).
func distinctHandles(paths string, n int) ([]string, error) {
	f, err := os.Open(paths)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var hs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(hs) < n {
		h := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "/")
		if h != "" && !seen[h] {
			seen[h] = true
			hs = append(hs, h)
		}
	}
	return hs, sc.Err()
}
