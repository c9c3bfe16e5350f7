package suite

import (
	"encoding/binary"
	"strings"
	"testing"

	"pidnode/handlev/hsmsg"
)

func TestParseCheck(t *testing.T) {
	out := "pidnode\treference\t1087 bytes\n" +
		"nginx\tok\tsame header set and values; same body; 1128 vs 1087 bytes (+3.8 %)\n" +
		"fasthttp map\tn/a: header sets differ: −link (/21.T/x)\n" +
		"nginx minimal\tminimal\t363 bytes\n" +
		"someone else\tok\tignored\n"
	m := parseCheck([]byte(out))
	if v := m[NginxLFL]; !v.OK || !strings.HasPrefix(v.Note, "same header set") {
		t.Errorf("nginx: %+v, want ok with the note", v)
	}
	if v := m[MapLFL]; v.OK || v.NA != "n/a: header sets differ: −link (/21.T/x)" {
		t.Errorf("fasthttp map: %+v, want n/a with the reason", v)
	}
	if m[Pidnode].Bytes != "1087 bytes" || m[NginxMin].Bytes != "363 bytes" {
		t.Errorf("byte counts: pidnode %q, nginx minimal %q", m[Pidnode].Bytes, m[NginxMin].Bytes)
	}
	if len(m) != 4 {
		t.Errorf("%d servers parsed, want 4: %+v", len(m), m)
	}
}

// reply builds an envelope and a resolution reply message with request id
// and expiration, as pidnode's TCP front sends them.
func reply(id, exp uint32, body string) []byte {
	h := hsmsg.Header{OpCode: hsmsg.OpResolution, ResponseCode: 1, OpFlag: hsmsg.FlagsJava, Expiration: exp, BodyLength: uint32(len(body))}
	msg := append(hsmsg.AppendHeader(nil, &h), body...)
	env := hsmsg.Envelope{Major: 2, Minor: 10, RequestID: id, MessageLength: uint32(len(msg))}
	return append(hsmsg.AppendEnvelope(nil, &env), msg...)
}

// TestReplyDiff: the native check sets aside only the RequestId and the
// ExpirationTime; any other byte, or a length, that differs refuses the
// comparison and says where.
func TestReplyDiff(t *testing.T) {
	ref := reply(7, 1000, "handle values")
	if d := replyDiff(ref, reply(99, 2000, "handle values")); d != "" {
		t.Errorf("other request id and expiration: %q, want the same", d)
	}
	tests := []struct {
		name  string
		other []byte
		want  string
	}{
		{"body", reply(7, 1000, "handle valueZ"), "(message)"},
		{"length", reply(7, 1000, "handle values!"), "sizes differ: 58 vs 57 bytes"},
		{"session id", func() []byte { b := reply(7, 1000, "handle values"); binary.BigEndian.PutUint32(b[4:], 1); return b }(), "offset 7 (envelope)"},
		{"response code", func() []byte { b := reply(7, 1000, "handle values"); b[hsmsg.EnvelopeLen+7] = 2; return b }(), "(header)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := replyDiff(ref, tt.other); !strings.Contains(d, tt.want) {
				t.Errorf("replyDiff = %q, want it to say %q", d, tt.want)
			}
		})
	}
}

// TestComparisonGate: a like-for-like ratio row carries its baseline only
// when the check passed; otherwise the baseline reads the check's reason
// (and the target is not judged), or says no like-for-like server ran.
func TestComparisonGate(t *testing.T) {
	s := &Suite{rounds: map[string]*Rounds{}, ran: map[Group]int{HitRounds: 3}, ol: map[string]map[int]*OpenLoop{}, why: map[string][]string{},
		lfl: map[Server]Verdict{
			Pidnode:  {Bytes: "1087 bytes"},
			NginxLFL: {OK: true, Note: "same header set and values"},
			MapLFL:   {NA: "n/a: header sets differ: −link (/x)"},
			NginxMin: {Bytes: "363 bytes"},
		}}
	for _, sc := range Scenarios {
		s.rounds[sc.ID] = rounds(Result{PerCPU: 100, Requests: 500, ServerSecs: 5, Duration: 5})
	}
	byRow := map[string]Comparison{}
	for _, c := range Comparisons {
		byRow[c.Row] = c
	}
	row := func(id string) (r struct {
		base             bool
		na, note, target string
	}) {
		c := byRow[id]
		sc, _ := ScenarioByID(c.Scenario)
		got := s.comparisonRow(c, sc)
		r.base, r.na, r.note = got.Baseline != nil, got.BaselineNA, got.Note
		if got.Target != nil {
			r.target = got.Target.Kind
		}
		return r
	}
	if r := row("hit_nginx"); r.na != "" || !r.base || !strings.Contains(r.note, "same header set and values") || r.target != "ratio_min" {
		t.Errorf("hit_nginx (check passed): %+v", r)
	}
	if r := row("hit_fasthttp"); r.na != "n/a: header sets differ: −link (/x)" {
		t.Errorf("hit_fasthttp (check refused): baseline n/a %q, want the check's reason", r.na)
	}
	if r := row("hdl_tcp"); r.na != "n/a: no like-for-like native map" {
		t.Errorf("hdl_tcp (not checked): baseline n/a %q, want that no like-for-like server ran", r.na)
	}
	if r := row("hit_nginx_min"); !strings.Contains(r.note, "its plainest 302: 363 bytes against pidnode's 1087 bytes") || r.target != "" {
		t.Errorf("hit_nginx_min (reference): %+v", r)
	}
	if r := row("api"); strings.Contains(r.note, "plainest") || r.na != "" || !r.base {
		t.Errorf("api (a page against the redirect): %+v", r)
	}
}

// TestP99RowsServerCPU: the p99 rows say the server's CPU per request in
// each open-loop run, beside the best closed-loop round's and nginx's.
func TestP99RowsServerCPU(t *testing.T) {
	s := &Suite{rounds: map[string]*Rounds{"redirect": rounds(Result{PerCPU: 100000, Requests: 500000, ServerSecs: 5, Duration: 5})},
		ol: map[string]map[int]*OpenLoop{
			"redirect":  {25: {Pct: 25, ServerUS: 40}, 50: {Pct: 50, ServerUS: 30}, 75: {Pct: 75, ServerUS: 25}},
			"nginx-lfl": {50: {Pct: 50, ServerUS: 20}},
		},
		why: map[string][]string{}, lfl: map[Server]Verdict{NginxLFL: {OK: true}}}
	s.p99Rows()
	notes := map[string]string{}
	for _, r := range s.res.Rows {
		notes[r.ID] = r.Note
	}
	if want := "server CPU per request in the open loop 25 %: 40.0 µs, 50 %: 30.0 µs, 75 %: 25.0 µs (best closed-loop round: 10.0 µs)"; !strings.Contains(notes["hit_p99"], want) {
		t.Errorf("hit_p99 note %q lacks %q", notes["hit_p99"], want)
	}
	if want := "server CPU per request at 50 %: pidnode 30.0 µs, nginx 20.0 µs"; !strings.Contains(notes["hit_p99_nginx"], want) {
		t.Errorf("hit_p99_nginx note %q lacks %q", notes["hit_p99_nginx"], want)
	}
	if why := strings.Join(s.why["hit_p99"], " "); !strings.Contains(why, "the fasthttp map ?") {
		t.Errorf("hit_p99 reason %q: an open loop that did not run should read ?", why)
	}
}
