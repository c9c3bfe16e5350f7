package hsmsg

import (
	"bytes"
	"reflect"
	"testing"

	"pidnode/handlev"
)

// fuzzSeeds are real messages: the docs/handle-protocol.md §3.5 vectors, a reply with values, a site reply,
// a request with filters.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	req := func(q *ResolutionRequest, flags uint32) []byte {
		m := AppendHeader(nil, &Header{OpCode: OpResolution, OpFlag: flags, SiteInfoSerial: SerialUnknown, Expiration: 1700000000})
		m = AppendResolutionRequest(m, q)
		SetBodyLength(m, len(m)-HeaderLen)
		return appendU32(m, 0)
	}
	seeds = append(seeds, req(&ResolutionRequest{Handle: []byte("123/abc")}, FlagsJava))
	seeds = append(seeds, req(&ResolutionRequest{Handle: []byte("21.T11148/svc/X/1"), Indexes: []int32{1, 2}, Types: [][]byte{[]byte("URL."), []byte("EMAIL")}}, FlagsJava|FlagRD|FlagCT))
	rep := func(r *Reply) []byte {
		m := AppendHeader(nil, &r.Header)
		m = appendReplyBody(m, r)
		SetBodyLength(m, len(m)-HeaderLen)
		return appendU32(m, 0)
	}
	vals := []handlev.Value{
		{Index: 1, Type: "URL", Data: []byte("https://example.org/"), TTL: 86400, Perm: handlev.PermDefault, Timestamp: 1700000000},
		{Index: 2, Type: "RELATED", Data: []byte("x"), Perm: handlev.PermDefault, Refs: []handlev.Ref{{Handle: "21/Y", Index: 1}}},
		{Index: 100, Type: "HS_ADMIN", Data: handlev.AppendAdmin(nil, handlev.Admin{Mask: 0x0FFF, Handle: "0.NA/21", Index: 200}), TTL: 86400, Perm: handlev.PermDefault},
	}
	seeds = append(seeds, rep(&Reply{Message: Message{Header: Header{OpCode: 1, ResponseCode: 1, OpFlag: FlagsJava}}, Handle: []byte("21/X"), Values: vals}))
	seeds = append(seeds, rep(&Reply{Message: Message{Header: Header{OpCode: 1, ResponseCode: 100, OpFlag: FlagsJava | FlagRD}}, Digest: &Digest{Alg: DigestSHA1, Sum: make([]byte, 20)}, ErrorMessage: []byte{}}))
	s := testSite([]byte("k"))
	seeds = append(seeds, rep(&Reply{Message: Message{Header: Header{OpCode: 2, ResponseCode: 1}}, Site: &s}))
	return seeds
}

// FuzzDecodeMessage: no input makes the decoders panic, and whatever decodes
// re-encodes to bytes that decode to the same thing.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		_, _ = ParseEnvelope(msg)
		_, _ = ParseCredential(msg)
		_, _ = ParseRSAPublicKey(msg)
		if s, err := DecodeSite(msg); err == nil {
			s2, err := DecodeSite(AppendSite(nil, &s))
			if err != nil || !reflect.DeepEqual(s, s2) {
				t.Fatalf("site round trip: %v\n%+v\n%+v", err, s, s2)
			}
		}
		m, err := ParseMessage(msg)
		if err != nil {
			return
		}
		if c, err := ParseCredential(m.Credential); err == nil {
			c2, err := ParseCredential(AppendCredential(nil, &c))
			if err != nil || !reflect.DeepEqual(c, c2) {
				t.Fatalf("credential round trip: %v", err)
			}
		}
		if m.Header.ResponseCode == RCReserved {
			var q, q2 ResolutionRequest
			if q.Decode(m.Body) != nil {
				return
			}
			if err := q2.Decode(AppendResolutionRequest(nil, &q)); err != nil {
				t.Fatalf("request round trip: %v", err)
			}
			if !bytes.Equal(q.Handle, q2.Handle) || !reflect.DeepEqual(q.Indexes, q2.Indexes) || !reflect.DeepEqual(q.Types, q2.Types) {
				t.Fatalf("request round trip differs: %+v vs %+v", q, q2)
			}
			return
		}
		rep, err := ParseReply(msg)
		if err != nil {
			return
		}
		re := AppendHeader(nil, &rep.Header)
		re = appendReplyBody(re, &rep)
		SetBodyLength(re, len(re)-HeaderLen)
		re = appendBytes(re, rep.Credential)
		rep2, err := ParseReply(re)
		if err != nil {
			t.Fatalf("reply round trip: %v", err)
		}
		if rep.Header != rep2.Header || !bytes.Equal(rep.Handle, rep2.Handle) || !bytes.Equal(rep.ErrorMessage, rep2.ErrorMessage) ||
			!bytes.Equal(rep.Rest, rep2.Rest) || !bytes.Equal(rep.Credential, rep2.Credential) ||
			len(rep.Values) != len(rep2.Values) || !reflect.DeepEqual(rep.Site, rep2.Site) || !reflect.DeepEqual(rep.Digest, rep2.Digest) {
			t.Fatalf("reply round trip differs:\n%+v\n%+v", rep, rep2)
		}
		for i := range rep.Values {
			if !rep.Values[i].Equal(&rep2.Values[i]) {
				t.Fatalf("value %d differs", i)
			}
		}
	})
}
