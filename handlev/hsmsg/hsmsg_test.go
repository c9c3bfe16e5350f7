package hsmsg

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pidnode/handlev"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, a hex file (whitespace and '|' ignored,
// "XXXXXXXX" standing for the 4-byte ExpirationTime at expOff when expOff >= 0).
func golden(t *testing.T, name string, got []byte, expOff int) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		h := strings.ToUpper(hex.EncodeToString(got))
		if expOff >= 0 {
			h = h[:2*expOff] + "XXXXXXXX" + h[2*expOff+8:]
		}
		if err := os.WriteFile(path, []byte(h+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '|' || r == '\t' {
			return -1
		}
		return r
	}, string(raw))
	g := strings.ToUpper(hex.EncodeToString(got))
	if expOff >= 0 && len(g) >= 2*expOff+8 {
		g = g[:2*expOff] + "XXXXXXXX" + g[2*expOff+8:]
	}
	if g != want {
		t.Errorf("%s:\n got %s\nwant %s", name, g, want)
	}
}

// Vectors of docs/handle-protocol.md §3.5, byte for byte (testdata/*.hex hold the same
// bytes; ExpirationTime is variable and compared around).
func TestSpecVectors(t *testing.T) {
	const exp = 1700000000
	t.Run("resolution request 123/abc", func(t *testing.T) {
		h := Header{OpCode: OpResolution, OpFlag: FlagsJava, SiteInfoSerial: SerialUnknown, Expiration: exp}
		msg := AppendHeader(nil, &h)
		msg = AppendResolutionRequest(msg, &ResolutionRequest{Handle: []byte("123/abc")})
		SetBodyLength(msg, len(msg)-HeaderLen)
		msg = appendU32(msg, 0) // no credential
		golden(t, "resolution_request_123_abc.hex", msg, 16)

		m, err := ParseMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		var q ResolutionRequest
		if err := q.Decode(m.Body); err != nil {
			t.Fatal(err)
		}
		if string(q.Handle) != "123/abc" || len(q.Indexes) != 0 || len(q.Types) != 0 || m.Header.Expiration != exp {
			t.Errorf("decoded %+v %+v", m.Header, q)
		}
	})
	t.Run("reply RC 100", func(t *testing.T) {
		// As a primary site whose HS_SITE has serial number 1 answers: AT set,
		// its own serial instead of the request's "unknown".
		h := Header{OpCode: OpResolution, ResponseCode: RCHandleNotFound, OpFlag: FlagsJava | FlagAT, SiteInfoSerial: 1, Expiration: exp}
		msg := AppendHeader(nil, &h)
		msg = AppendErrorBody(msg, "")
		SetBodyLength(msg, len(msg)-HeaderLen)
		msg = appendU32(msg, 0)
		golden(t, "reply_rc100.hex", msg, 16)
		rep, err := ParseReply(msg)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Header.ResponseCode != 100 || len(rep.ErrorMessage) != 0 {
			t.Errorf("ParseReply = %+v", rep)
		}
	})
	t.Run("value", func(t *testing.T) {
		v := handlev.Value{Index: 1, Timestamp: 1000000000, TTL: 86400, Perm: handlev.PermDefault,
			Type: "URL", Data: []byte("http://example.org/x?a=1&b=<2>")}
		golden(t, "value_url.hex", handlev.AppendValue(nil, &v), -1)
	})
	t.Run("HS_ADMIN data", func(t *testing.T) {
		golden(t, "hs_admin.hex", handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: "0.NA/123", Index: 200}), -1)
	})
}

func TestEnvelope(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Envelope
		wantErr error
	}{
		{"java 2.10 suggests 2.11", "020A020B 00000000 00000007 00000000 00000031",
			Envelope{Major: 2, Minor: 10, SuggestMajor: 2, SuggestMinor: 11, RequestID: 7, MessageLength: 0x31}, nil},
		{"truncated flag", "020B2000 00000001 00000002 00000003 000003E8",
			Envelope{Major: 2, Minor: 11, Flags: EnvTruncated, SessionID: 1, RequestID: 2, SequenceNumber: 3, MessageLength: 1000}, nil},
		{"negative length", "020B0000 00000000 00000000 00000000 FFFFFFFF", Envelope{}, ErrNegativeLength},
		{"too long", "020B0000 00000000 00000000 00000000 00040001", Envelope{}, ErrTooLong},
		{"max ok", "020B0000 00000000 00000000 00000000 00040000",
			Envelope{Major: 2, Minor: 11, MessageLength: MaxMessageLen}, nil},
		{"short", "020B0000 0000", Envelope{}, ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := hex.DecodeString(strings.ReplaceAll(tc.in, " ", ""))
			got, err := ParseEnvelope(b)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ParseEnvelope(%s) err = %v, want %v", tc.in, err, tc.wantErr)
				}
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Errorf("error %T is not a *FormatError", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseEnvelope(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if re := AppendEnvelope(nil, &got); !bytes.Equal(re, b) {
				t.Errorf("AppendEnvelope = %x, want %x", re, b)
			}
		})
	}
	e := Envelope{Major: 2, Minor: 5}
	if ma, mi := e.Suggested(); ma != 2 || mi != 5 {
		t.Errorf("Suggested() with 0 suggestion = %d.%d, want 2.5", ma, mi)
	}
}

func TestMessageErrors(t *testing.T) {
	h := Header{OpCode: 1, BodyLength: 10}
	base := AppendHeader(nil, &h)
	tests := []struct {
		name string
		msg  []byte
		want error
	}{
		{"short header", base[:10], ErrTruncated},
		{"body beyond end", append(bytes.Clone(base), 1, 2, 3), ErrTruncated},
		{"negative body", AppendHeader(nil, &Header{BodyLength: 0x80000000}), ErrNegativeLength},
		{"huge body", AppendHeader(nil, &Header{BodyLength: MaxMessageLen + 1}), ErrTooLong},
		{"credential beyond end", append(append(bytes.Clone(base), make([]byte, 10)...), 0, 0, 0, 9), ErrTruncated},
		{"trailing after credential", append(append(bytes.Clone(base), make([]byte, 10)...), 0, 0, 0, 0, 7), ErrTrailingData},
		{"negative credential", append(append(bytes.Clone(base), make([]byte, 10)...), 0xFF, 0, 0, 0), ErrNegativeLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseMessage(tc.msg); !errors.Is(err, tc.want) {
				t.Errorf("ParseMessage = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestResolutionRequestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		q    ResolutionRequest
	}{
		{"plain", ResolutionRequest{Handle: []byte("21.T11148/abc")}},
		{"indexes", ResolutionRequest{Handle: []byte("x/y"), Indexes: []int32{1, 100, -5}}},
		{"types", ResolutionRequest{Handle: []byte("x/y"), Types: [][]byte{[]byte("URL"), []byte("HS_")}}},
		{"both", ResolutionRequest{Handle: []byte("x/y"), Indexes: []int32{2}, Types: [][]byte{[]byte("EMAIL")}}},
	}
	var q ResolutionRequest
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := AppendResolutionRequest(nil, &tc.q)
			if err := q.Decode(b); err != nil {
				t.Fatal(err)
			}
			if string(q.Handle) != string(tc.q.Handle) || len(q.Indexes) != len(tc.q.Indexes) || len(q.Types) != len(tc.q.Types) {
				t.Fatalf("Decode = %+v, want %+v", q, tc.q)
			}
			for i := range q.Indexes {
				if q.Indexes[i] != tc.q.Indexes[i] {
					t.Errorf("index %d = %d", i, q.Indexes[i])
				}
			}
			for i := range q.Types {
				if !bytes.Equal(q.Types[i], tc.q.Types[i]) {
					t.Errorf("type %d = %q", i, q.Types[i])
				}
			}
			for cut := 0; cut < len(b); cut++ {
				if err := q.Decode(b[:cut]); !errors.Is(err, ErrTruncated) {
					t.Fatalf("Decode(first %d bytes) = %v, want ErrTruncated", cut, err)
				}
			}
		})
	}
	if err := q.Decode([]byte{0, 0, 0, 0, 0, 1, 0, 0}); !errors.Is(err, ErrTooLong) {
		t.Errorf("huge index count: %v", err)
	}
}

func TestResolutionRequestDecodeAllocs(t *testing.T) {
	b := AppendResolutionRequest(nil, &ResolutionRequest{Handle: []byte("x/y"), Indexes: []int32{1, 2}, Types: [][]byte{[]byte("URL")}})
	var q ResolutionRequest
	_ = q.Decode(b)
	if n := testing.AllocsPerRun(100, func() { _ = q.Decode(b) }); n != 0 {
		t.Errorf("Decode allocs = %v, want 0", n)
	}
}

func TestMatchType(t *testing.T) {
	tests := []struct {
		req, typ string
		want     bool
	}{
		{"URL", "URL", true},
		{"url", "URL", true},
		{"URL", "URL.jp", false},
		{"URL.", "URL.jp", true},
		{"URL.", "URL", true},
		{"URL.", "URLX", false},
		{"URL.jp", "URL", false},
		{"HS_", "HS_ADMIN", false},
		{"", "URL", false},
		{".", "URL", false},
		{"URL", "", false},
	}
	for _, tc := range tests {
		if got := MatchType([]byte(tc.req), tc.typ); got != tc.want {
			t.Errorf("MatchType(%q, %q) = %v, want %v", tc.req, tc.typ, got, tc.want)
		}
	}
}

func TestDigest(t *testing.T) {
	tests := []struct {
		major, minor uint8
		alg          uint8
		size         int
	}{
		{2, 11, DigestSHA256, 32}, {2, 7, DigestSHA256, 32}, {2, 6, DigestSHA1, 20},
		{2, 1, DigestSHA1, 20}, {2, 0, DigestMD5, 16}, {1, 9, DigestMD5, 16}, {3, 0, DigestSHA256, 32},
	}
	for _, tc := range tests {
		alg := DigestAlgFor(tc.major, tc.minor)
		if alg != tc.alg {
			t.Errorf("DigestAlgFor(%d.%d) = %d, want %d", tc.major, tc.minor, alg, tc.alg)
		}
		b := AppendDigest(nil, alg, []byte("header+body"))
		if len(b) != 1+tc.size || b[0] != alg {
			t.Errorf("AppendDigest(%d) = %x", alg, b)
		}
		r := reader{b: b}
		d, err := r.digest()
		if err != nil || d.Alg != alg || !bytes.Equal(d.Sum, b[1:]) {
			t.Errorf("digest() = %+v, %v", d, err)
		}
	}
	r := reader{b: []byte{9, 1, 2}}
	if _, err := r.digest(); !errors.Is(err, ErrBadDigest) {
		t.Errorf("unknown alg: %v", err)
	}
}

func testSite(pub []byte) Site {
	return Site{
		DataFormatVersion: 1, Major: 2, Minor: 11, Serial: 3, Primary: true,
		Attributes: []Attribute{{Name: "desc", Value: "pidnode test"}},
		Servers: []Server{{
			ID: 1, Address: AddrBytes(netip.MustParseAddr("192.0.2.7")), PublicKey: pub,
			Interfaces: []Interface{{Type: IfQuery, Protocol: ProtoTCP, Port: 2641}, {Type: IfQuery, Protocol: ProtoUDP, Port: 2641}},
		}},
	}
}

func TestSite(t *testing.T) {
	s := testSite(nil)
	b := AppendSite(nil, &s)
	golden(t, "site.hex", b, -1)
	got, err := DecodeSite(b)
	if err != nil {
		t.Fatal(err)
	}
	got.HashFilter = nil
	s.Servers[0].PublicKey = nil
	got.Servers[0].PublicKey = nil
	if !reflect.DeepEqual(got, s) {
		t.Errorf("DecodeSite = %+v, want %+v", got, s)
	}
	if a := got.Servers[0].Addr(); a != netip.MustParseAddr("192.0.2.7") {
		t.Errorf("Addr() = %v", a)
	}
	for cut := 0; cut < len(b); cut++ {
		if _, err := DecodeSite(b[:cut]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("DecodeSite(first %d) = %v", cut, err)
		}
	}
	if _, err := DecodeSite(append(b, 0)); !errors.Is(err, ErrTrailingData) {
		t.Errorf("trailing: %v", err)
	}
	v6 := Server{Address: AddrBytes(netip.MustParseAddr("2001:db8::1"))}
	if v6.Addr() != netip.MustParseAddr("2001:db8::1") {
		t.Errorf("v6 Addr() = %v", v6.Addr())
	}
	mapped := Server{Address: netip.MustParseAddr("::ffff:10.0.0.1").As16()}
	if mapped.Addr() != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("mapped Addr() = %v", mapped.Addr())
	}
}

func TestRSAPublicKeyAndSignature(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	enc := AppendRSAPublicKey(nil, &key.PublicKey)
	// "RSA_PUB_KEY", flags, exponent 65537 = 01 00 01, modulus with a leading zero.
	if !bytes.HasPrefix(enc, []byte("\x00\x00\x00\x0bRSA_PUB_KEY\x00\x00\x00\x00\x00\x03\x01\x00\x01\x00\x00\x01\x01\x00")) {
		t.Errorf("AppendRSAPublicKey prefix = %x", enc[:30])
	}
	if len(enc) != 4+11+2+4+3+4+257+4 {
		t.Errorf("len = %d", len(enc))
	}
	pub, err := ParseRSAPublicKey(enc)
	if err != nil || !pub.Equal(&key.PublicKey) {
		t.Fatalf("ParseRSAPublicKey = %v, %v", pub, err)
	}
	if _, err := ParseRSAPublicKey([]byte("\x00\x00\x00\x03DSA")); !errors.Is(err, ErrBadKey) {
		t.Errorf("DSA key: %v", err)
	}

	signed := []byte("header and body bytes")
	for _, v := range []struct{ major, minor uint8 }{{2, 11}, {2, 8}, {2, 7}, {2, 6}, {2, 5}} {
		env := Envelope{Major: v.major, Minor: v.minor, SuggestMajor: 2, SuggestMinor: 11, SessionID: 5, RequestID: 99}
		cred, err := AppendSignedCredential(nil, key, &env, signed)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyCredential(&key.PublicKey, &env, signed, cred); err != nil {
			t.Errorf("%d.%d: VerifyCredential = %v", v.major, v.minor, err)
		}
		c, err := ParseCredential(cred)
		if err != nil {
			t.Fatal(err)
		}
		wantAlg := HashSHA256
		if v.minor < 7 {
			wantAlg = HashSHA1
		}
		if string(c.Type) != "HS_SIGNED" || string(c.HashAlg) != wantAlg || len(c.Signature) != 256 {
			t.Errorf("%d.%d: credential %+v", v.major, v.minor, c)
		}
		env2 := env
		env2.RequestID++
		if v.minor >= 7 {
			if err := VerifyCredential(&key.PublicKey, &env2, signed, cred); !errors.Is(err, ErrBadSignature) {
				t.Errorf("%d.%d: other request id verifies: %v", v.major, v.minor, err)
			}
		}
		if err := VerifyCredential(&key.PublicKey, &env, append([]byte("x"), signed...), cred); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%d.%d: altered message verifies: %v", v.major, v.minor, err)
		}
	}
	// Prefix layouts.
	env := Envelope{Major: 2, Minor: 11, SuggestMajor: 2, SuggestMinor: 11, SessionID: 0x01020304, RequestID: 0x0A0B0C0D}
	if p := AppendSigningPrefix(nil, &env); hex.EncodeToString(p) != "020b020b010203040a0b0c0d00000000" {
		t.Errorf("2.11 prefix = %x", p)
	}
	env.Minor = 7
	if p := AppendSigningPrefix(nil, &env); hex.EncodeToString(p) != "0207010203040a0b0c0d00000000" {
		t.Errorf("2.7 prefix = %x", p)
	}
	env.Minor = 6
	if p := AppendSigningPrefix(nil, &env); hex.EncodeToString(p) != "0206010200000000000000000000" {
		t.Errorf("2.6 prefix = %x", p)
	}
	env.Minor = 5
	if p := AppendSigningPrefix(nil, &env); len(p) != 0 {
		t.Errorf("2.5 prefix = %x", p)
	}
}

func TestPiecesAndAssembly(t *testing.T) {
	for _, n := range []int{0, 1, 491, 492, 493, 984, 985, 5000} {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i * 7)
		}
		env := Envelope{Major: 2, Minor: 11, RequestID: 42, SessionID: 3}
		k := NumPieces(n)
		var a *Assembly
		done := false
		// Deliver in reverse order with a duplicate.
		for i := k - 1; i >= 0; i-- {
			p := AppendPiece(nil, env, msg, i)
			if len(p) > MaxUDPPacket {
				t.Fatalf("n=%d piece %d is %d bytes", n, i, len(p))
			}
			pe, err := ParseEnvelope(p)
			if err != nil {
				t.Fatal(err)
			}
			if pe.SequenceNumber != uint32(i) || pe.MessageLength != uint32(n) || pe.Truncated() != (k > 1) {
				t.Fatalf("n=%d piece %d envelope %+v", n, i, pe)
			}
			if a == nil {
				a = NewAssembly(pe)
			}
			if done, err = a.Add(&pe, p[EnvelopeLen:]); err != nil {
				t.Fatalf("n=%d Add(%d) = %v", n, i, err)
			}
			if i == k-1 && k > 1 {
				if d, err := a.Add(&pe, p[EnvelopeLen:]); d || err != nil {
					t.Fatalf("duplicate: %v %v", d, err)
				}
			}
		}
		if !done || !bytes.Equal(a.Message(), msg) {
			t.Fatalf("n=%d: done=%v, message differs", n, done)
		}
	}
	a := NewAssembly(Envelope{RequestID: 1, MessageLength: 1000})
	bad := []struct {
		name string
		env  Envelope
		n    int
	}{
		{"other request", Envelope{RequestID: 2, MessageLength: 1000}, 492},
		{"other length", Envelope{RequestID: 1, MessageLength: 999}, 492},
		{"seq out of range", Envelope{RequestID: 1, MessageLength: 1000, SequenceNumber: 3}, 16},
		{"short middle piece", Envelope{RequestID: 1, MessageLength: 1000, SequenceNumber: 0}, 100},
		{"wrong last size", Envelope{RequestID: 1, MessageLength: 1000, SequenceNumber: 2}, 17},
	}
	for _, tc := range bad {
		if _, err := a.Add(&tc.env, make([]byte, tc.n)); !errors.Is(err, ErrFragment) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestReplyRoundTrip(t *testing.T) {
	vals := []handlev.Value{
		{Index: 1, Type: "URL", Data: []byte("https://example.org/"), TTL: 86400, Perm: handlev.PermDefault, Timestamp: 1700000000},
		{Index: 100, Type: "HS_ADMIN", Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: "0.NA/21", Index: 200}), TTL: 86400, Perm: handlev.PermDefault},
	}
	site := testSite([]byte("key"))
	sum := bytes.Repeat([]byte{7}, 32)
	tests := []struct {
		name string
		rep  Reply
	}{
		{"resolution", Reply{Message: Message{Header: Header{OpCode: 1, ResponseCode: 1, OpFlag: FlagsJava}}, Handle: []byte("21/X"), Values: vals}},
		{"resolution with digest", Reply{Message: Message{Header: Header{OpCode: 1, ResponseCode: 1, OpFlag: FlagRD}}, Digest: &Digest{Alg: DigestSHA256, Sum: sum}, Handle: []byte("21/X"), Values: vals}},
		{"error", Reply{Message: Message{Header: Header{OpCode: 1, ResponseCode: 2}}, ErrorMessage: []byte("boom")}},
		{"site", Reply{Message: Message{Header: Header{OpCode: 2, ResponseCode: 1}}, Site: &site}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := AppendHeader(nil, &tc.rep.Header)
			msg = appendReplyBody(msg, &tc.rep)
			SetBodyLength(msg, len(msg)-HeaderLen)
			got, err := ParseReply(msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Handle, tc.rep.Handle) || !bytes.Equal(got.ErrorMessage, tc.rep.ErrorMessage) ||
				len(got.Values) != len(tc.rep.Values) || (tc.rep.Digest != nil) != (got.Digest != nil) {
				t.Fatalf("ParseReply = %+v", got)
			}
			for i := range got.Values {
				if !got.Values[i].Equal(&tc.rep.Values[i]) {
					t.Errorf("value %d = %+v", i, got.Values[i])
				}
			}
			if tc.rep.Site != nil && !reflect.DeepEqual(got.Site.Servers, tc.rep.Site.Servers) {
				t.Errorf("site = %+v", got.Site)
			}
		})
	}
}

// appendReplyBody appends the body of rep (digest included when rep.Digest is set),
// the inverse of ParseReply for the body; the server builds its bodies directly.
func appendReplyBody(dst []byte, rep *Reply) []byte {
	if d := rep.Digest; d != nil {
		if d.Alg == DigestMD5OldFormat {
			dst = appendBytes(dst, d.Sum)
		} else {
			dst = append(dst, d.Alg)
			dst = append(dst, d.Sum...)
		}
	}
	h := &rep.Header
	switch {
	case h.ResponseCode == RCSuccess && h.OpCode == OpResolution:
		dst = appendBytes(dst, rep.Handle)
		dst = handlev.AppendValues(dst, rep.Values)
	case h.ResponseCode == RCSuccess && h.OpCode == OpGetSiteInfo:
		if rep.Site != nil {
			dst = AppendSite(dst, rep.Site)
		}
	case h.ResponseCode == RCSuccess || h.ResponseCode == 302 || h.ResponseCode == 303 || h.ResponseCode == 402:
		dst = append(dst, rep.Rest...)
	default:
		if rep.ErrorMessage != nil {
			dst = appendBytes(dst, rep.ErrorMessage)
		}
	}
	return dst
}
