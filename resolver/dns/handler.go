package hdldns

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"weak"

	"github.com/miekg/dns"

	"pidnode/cache"
	"pidnode/handlev"
	"pidnode/internal/ascii"
	"pidnode/internal/unsafeconv"
)

// reply is per-query scratch space, pooled: the response message and the
// records of the common answers live here, so a cached TXT or URI answer costs
// little more than miekg's own packing.
type reply struct {
	msg    dns.Msg
	opt    dns.OPT
	txt    dns.TXT
	uri    dns.URI
	q      [1]dns.Question
	answer [4]dns.RR
	auth   [1]dns.RR
	extra  [1]dns.RR
	strs   [4]string
	handle []byte
	key    []byte
	buf    []byte
}

// maxPooledBuf: packing buffers that grew beyond this (large TCP answers) are
// not kept in the pool.
const maxPooledBuf = 16 << 10

// URI priority and weight of the answer built from the URL value.
const (
	uriPriority = 10
	uriWeight   = 1
)

// maxURITarget is the longest URI target miekg/dns packs (presentation form).
const maxURITarget = 256*4 + 1

var statusText = [...]string{
	handlev.StatusObsoleted:  "status=" + handlev.StatusObsoleted.String(),
	handlev.StatusDeprecated: "status=" + handlev.StatusDeprecated.String(),
}

// ServeDNS implements dns.Handler. It writes at most one reply with w.Write
// (never for a request with QR set, nor for one the rate limiter drops). Over
// UDP (any RemoteAddr that is not a *net.TCPAddr) the reply fits the size the
// request allows; see the package documentation for what is answered.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	udp, src := transport(w)
	s.serveDNS(w, req, udp, src)
}

// serveDNS is ServeDNS with the transport and the source address already
// known: the UDP loop (udp.go) has them without asking w.
func (s *Server) serveDNS(w dns.ResponseWriter, req *dns.Msg, udp bool, src netip.Addr) {
	if req == nil || req.Response {
		return
	}
	s.stats.queries.Add(1)
	if udp && s.rrl != nil {
		switch s.rrl.check(src, s.now().UnixNano()) {
		case rrlDrop:
			s.stats.rrlDropped.Add(1)
			return
		case rrlSlip:
			s.stats.rrlSlipped.Add(1)
			s.writeSlip(w, req)
			return
		}
	}

	r := s.pool.Get().(*reply)
	size := s.build(r, req, udp)
	m := &r.msg
	s.count(m)
	m.Truncate(size) // drops what does not fit and sets TC
	if m.Truncated && udp {
		s.stats.truncated.Add(1)
	}
	// Compression is always on. Truncate leaves Compress false when the
	// message fits uncompressed; then, if the only names to compress are answer
	// owners equal to the question name, pack plainly and point those owners at
	// the question ourselves: miekg/dns would allocate a compression map per
	// message for the same bytes.
	fast := !m.Compress && ownersOnly(m)
	m.Compress = !fast
	out, err := m.PackBuffer(r.buf)
	if err == nil && fast {
		out = compressOwners(out, len(m.Answer))
	}
	if err != nil {
		// Only malformed stored data can get here (a parsed RR miekg cannot pack).
		s.log.Warn("dns: pack reply", "name", questionName(req), "err", err)
		m.Answer, m.Ns, m.Truncated = m.Answer[:0], m.Ns[:0], false
		m.Rcode = dns.RcodeServerFailure
		m.Compress = true
		out, err = m.PackBuffer(r.buf)
	}
	if err == nil {
		if cap(out) <= maxPooledBuf {
			r.buf = out[:cap(out)]
		}
		w.Write(out) // a failed write means the client is gone: nothing to do
	}
	s.release(r)
}

// transport tells UDP from TCP by the remote address miekg/dns reports.
func transport(w dns.ResponseWriter) (udp bool, src netip.Addr) {
	switch a := w.RemoteAddr().(type) {
	case *net.TCPAddr:
		return false, a.AddrPort().Addr()
	case *net.UDPAddr:
		return true, a.AddrPort().Addr()
	}
	return true, netip.Addr{}
}

// questionName is the question's name for a log line: a copy, since the UDP
// loop's names live in a reused buffer (udp.go, queryParser).
func questionName(req *dns.Msg) string {
	if len(req.Question) > 0 {
		return strings.Clone(req.Question[0].Name)
	}
	return ""
}

func (s *Server) release(r *reply) {
	r.msg = dns.Msg{}
	r.opt = dns.OPT{}
	r.txt = dns.TXT{}
	r.uri = dns.URI{}
	r.q = [1]dns.Question{}
	r.answer = [4]dns.RR{}
	r.auth = [1]dns.RR{}
	r.extra = [1]dns.RR{}
	r.strs = [4]string{}
	s.pool.Put(r)
}

func (s *Server) count(m *dns.Msg) {
	c := &s.stats
	switch m.Rcode {
	case dns.RcodeSuccess:
		if len(m.Answer) > 0 {
			c.noError.Add(1)
		} else {
			c.noData.Add(1)
		}
	case dns.RcodeNameError:
		c.nxDomain.Add(1)
	case dns.RcodeRefused:
		c.refused.Add(1)
	case dns.RcodeServerFailure:
		c.servFail.Add(1)
	default:
		c.other.Add(1)
	}
}

// writeSlip sends the rate limiter's minimal reply: header and question, TC set,
// so a real client retries over TCP while a spoofed victim gets no amplification.
func (s *Server) writeSlip(w dns.ResponseWriter, req *dns.Msg) {
	r := s.pool.Get().(*reply)
	m := &r.msg
	s.header(r, req)
	m.Truncated = true
	if out, err := m.PackBuffer(r.buf); err == nil {
		w.Write(out)
	}
	s.release(r)
}

// header starts a reply to req: id, opcode, RD and CD copied, the question
// echoed when there is exactly one, AA and RA clear.
func (s *Server) header(r *reply, req *dns.Msg) {
	m := &r.msg
	m.Id = req.Id
	m.Response = true
	m.Opcode = req.Opcode
	m.RecursionDesired = req.RecursionDesired
	m.CheckingDisabled = req.CheckingDisabled
	if len(req.Question) == 1 {
		r.q[0] = req.Question[0]
		m.Question = r.q[:1]
	}
	m.Answer, m.Ns, m.Extra = r.answer[:0], r.auth[:0], r.extra[:0]
}

// build fills r.msg with the reply to req and returns the largest size it may
// have on the wire.
func (s *Server) build(r *reply, req *dns.Msg, udp bool) (size int) {
	m := &r.msg
	s.header(r, req)
	size = dns.MaxMsgSize
	if udp {
		size = dns.MinMsgSize
	}
	if req.Opcode != dns.OpcodeQuery {
		m.Rcode = dns.RcodeNotImplemented
		return size
	}

	// EDNS0 (RFC 6891): echo an OPT with our size and the client's DO bit.
	var opt *dns.OPT
	nopt := 0
	for _, rr := range req.Extra {
		if o, ok := rr.(*dns.OPT); ok {
			opt = o
			nopt++
		}
	}
	if nopt > 1 {
		m.Rcode = dns.RcodeFormatError
		return size
	}
	if opt != nil {
		r.opt.Hdr = dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}
		r.opt.SetUDPSize(uint16(s.udpSize))
		if opt.Do() {
			r.opt.SetDo()
		}
		m.Extra = append(m.Extra, &r.opt)
		if udp {
			size = min(max(int(opt.UDPSize()), dns.MinMsgSize), s.udpSize)
		}
		if opt.Version() != 0 {
			m.Rcode = dns.RcodeBadVers
			return size
		}
	}

	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		return size
	}
	q := &r.q[0]
	if q.Qclass != dns.ClassINET || q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR {
		m.Rcode = dns.RcodeRefused
		return size
	}
	z, sub := s.findZone(q.Name)
	if z == nil {
		m.Rcode = dns.RcodeRefused
		return size
	}
	m.Authoritative = true
	s.answerZone(r, z, sub, q)
	return size
}

// answerZone answers q for the name sub (labels above zone z, "" at the apex).
func (s *Server) answerZone(r *reply, z *zone, sub string, q *dns.Question) {
	m := &r.msg
	if sub == "" {
		switch q.Qtype {
		case dns.TypeSOA, dns.TypeANY:
			m.Answer = append(m.Answer, z.soa)
			return
		case dns.TypeNS:
			m.Answer = append(m.Answer, z.ns...)
			return
		}
	}
	e, err := s.lookup(r, z, sub)
	if err != nil {
		s.log.Warn("dns: cache lookup", "name", strings.Clone(q.Name), "err", err)
		m.Rcode = dns.RcodeServerFailure
		return
	}
	if e == nil {
		if sub != "" {
			m.Rcode = dns.RcodeNameError
		}
		m.Ns = append(m.Ns, z.negSOA)
		return
	}
	s.records(r, q, e)
	if len(m.Answer) == 0 {
		m.Ns = append(m.Ns, z.negSOA)
	}
}

// lookup returns the public cache entry for the name, or nil when there is no
// such handle (none formed, not found, SUBMITTED). err is a cache load failure.
func (s *Server) lookup(r *reply, z *zone, sub string) (*cache.Entry, error) {
	h, err := appendHandle(r.handle[:0], z.prefix, sub)
	r.handle = h[:0]
	if err != nil {
		return nil, nil
	}
	key, _, err := s.namer.AppendKey(r.key[:0], h)
	if err != nil {
		return nil, nil // a handle the Namer rejects (too long, NUL…) does not exist
	}
	r.key = key[:0]
	e, err := s.cache.Get(key)
	if err != nil {
		return nil, err
	}
	if e == nil || !e.Found || e.Public.Hidden() {
		return nil, nil
	}
	e.CountHit(s.counter) // resolution statistics (nil-safe, no allocation)
	return e, nil
}

// isMeta reports query-only and meta types (RFC 6895 §3.1), which no stored
// value can answer.
func isMeta(t uint16) bool {
	return t == 0 || t == dns.TypeOPT || (t >= 128 && t <= 255)
}

// records appends the answer to q from entry e's public view (cache.Entry.Public):
// every DNS query is anonymous, so only values with public read are answered.
func (s *Server) records(r *reply, q *dns.Question, e *cache.Entry) {
	m := &r.msg
	now := &clock{now: s.now}
	pub := &e.Public
	qt := q.Qtype
	if qt == dns.TypeANY {
		qt = dns.TypeTXT // RFC 8482 §4.2: answer ANY with one RRset
	}
	if pub.Gone() {
		if qt == dns.TypeTXT {
			r.strs[0] = statusText[pub.Status]
			r.txt.Hdr = dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: statusTTL(e.Record.Values, now)}
			r.txt.Txt = r.strs[:1]
			m.Answer = append(m.Answer, &r.txt)
		}
		return
	}
	switch {
	case qt == dns.TypeTXT:
		if u := pub.TargetValue(); u != nil && len(u.Data) > 0 { // a TXT needs one string at least
			r.txt.Hdr = dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttlOf(u, now)}
			r.txt.Txt = appendTXT(r.strs[:0], u.Data)
			m.Answer = append(m.Answer, &r.txt)
		}
	case qt == dns.TypeURI:
		if u := pub.TargetValue(); u != nil && len(u.Data) > 0 {
			if t := escapeTXT(u.Data); len(t) <= maxURITarget {
				r.uri.Hdr = dns.RR_Header{Name: q.Name, Rrtype: dns.TypeURI, Class: dns.ClassINET, Ttl: ttlOf(u, now)}
				r.uri.Priority, r.uri.Weight, r.uri.Target = uriPriority, uriWeight, t
				m.Answer = append(m.Answer, &r.uri)
			}
		}
	case qt == dns.TypeSOA || qt == dns.TypeNS || isMeta(qt):
		return // SOA and NS only at the apex, from Config; meta types never
	}
	m.Answer = s.appendStored(m.Answer, e, q.Name, qt, MaxRRsPerAnswer, now)
	if len(m.Answer) == 0 && qt != dns.TypeCNAME {
		m.Answer = s.appendStored(m.Answer, e, q.Name, dns.TypeCNAME, 1, now)
	}
	if len(m.Answer) > 1 { // one TTL per RRset (RFC 2181 §5.2)
		t := m.Answer[0].Header().Ttl
		for _, rr := range m.Answer[1:] {
			t = min(t, rr.Header().Ttl)
		}
		for _, rr := range m.Answer {
			rr.Header().Ttl = t
		}
	}
}

// statusTTL is the TTL of the first STATUS value of the whole record: the
// tombstone answers for the status, which is read from the whole record
// (handlev.Public.Status), and its TTL reveals no value's data.
func statusTTL(vals []handlev.Value, now *clock) uint32 {
	for i := range vals {
		if ascii.EqualFold(vals[i].Type, handlev.TypeStatus) {
			return ttlOf(&vals[i], now)
		}
	}
	return 0
}

// clock reads the Server's clock once per query, and only if a value has an
// absolute TTL.
type clock struct {
	now  func() time.Time
	unix int64
	read bool
}

func (c *clock) Unix() int64 {
	if !c.read {
		c.unix, c.read = c.now().Unix(), true
	}
	return c.unix
}

// ttlOf is the RR TTL of a value: relative TTLs as stored, absolute ones as the
// seconds left until the expiry time (RFC 3651 §3.1), never negative.
func ttlOf(v *handlev.Value, now *clock) uint32 {
	t := int64(v.TTL)
	if v.TTLType == handlev.TTLAbsolute {
		t -= now.Unix()
	}
	return uint32(min(max(t, 0), 1<<31-1))
}

// appendTXT splits data into TXT character-strings of at most 255 bytes.
func appendTXT(dst []string, data []byte) []string {
	for len(data) > 0 {
		n := min(len(data), 255)
		dst = append(dst, escapeTXT(data[:n]))
		data = data[n:]
	}
	return dst
}

// escapeTXT returns b as a string miekg/dns packs back to exactly b: it reads
// "\" as an escape in TXT and URI strings, so a backslash is doubled. Without
// one, the string shares b's memory: b is an immutable cached value, and the
// string outlives this query only in a pooled reply that release clears.
func escapeTXT(b []byte) string {
	n := 0
	for _, c := range b {
		if c == '\\' {
			n++
		}
	}
	if n == 0 {
		return unsafeconv.String(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + n)
	for _, c := range b {
		if c == '\\' {
			sb.WriteByte('\\')
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// appendStored appends up to limit RRs of type qt from the DNS.<TYPE> /
// DNS.TYPE<n> values of entry e, owner qname. Values that do not parse as one
// RR of that type are skipped. The parsed RRs are memoized per (entry, type)
// in s.memo; each answer gets copies with its owner name and TTLs.
func (s *Server) appendStored(dst []dns.RR, e *cache.Entry, qname string, qt uint16, limit int, now *clock) []dns.RR {
	ps := s.memo.get(e, qt)
	if ps == nil {
		if ps = parseStored(e, qt); ps == nil {
			return dst // no DNS.* value of that type: nothing to remember
		}
		s.memo.put(e, ps)
	}
	vals := e.Public.Values
	for i, tpl := range ps.rrs[:min(limit, len(ps.rrs))] {
		rr := dns.Copy(tpl)
		h := rr.Header()
		h.Name = qname
		h.Ttl = ttlOf(&vals[ps.val[i]], now)
		dst = append(dst, rr)
	}
	return dst
}

// parseStored parses e's public values of type qt (at most MaxRRsPerAnswer)
// into RRs with the root as owner. It returns nil if e has no public DNS.*
// value of that type.
func parseStored(e *cache.Entry, qt uint16) *parsedSet {
	var (
		ps            *parsedSet
		mnemonic      string
		known, looked bool
	)
	vals := e.Public.Values
	for i := range vals {
		v := &vals[i]
		if !ascii.HasPrefixFold(v.Type, "DNS.") {
			continue
		}
		if !looked { // the type table is a map: only consult it for records with DNS.* values
			mnemonic, known = typeString(qt)
			looked = true
		}
		if !typeMatches(v.Type[4:], qt, mnemonic, known) {
			continue
		}
		if ps == nil {
			ps = &parsedSet{e: weak.Make(e), qt: qt}
		}
		if len(ps.rrs) == MaxRRsPerAnswer {
			break
		}
		if rr := parseRR(qt, mnemonic, known, v.Data); rr != nil {
			ps.rrs = append(ps.rrs, rr)
			ps.val = append(ps.val, i)
		}
	}
	if ps != nil {
		ps.bytes = setBytes(ps)
	}
	return ps
}

// typeMatches reports whether the type suffix of a DNS.* value (after "DNS.")
// names qt: its mnemonic in any case, or TYPE<n> with n == qt.
func typeMatches(t string, qt uint16, mnemonic string, known bool) bool {
	if known && ascii.EqualFold(t, mnemonic) {
		return true
	}
	if !ascii.HasPrefixFold(t, "TYPE") || len(t) == 4 || len(t) > 9 {
		return false
	}
	n, err := strconv.ParseUint(t[4:], 10, 16)
	return err == nil && uint16(n) == qt
}

// typeString is qt's mnemonic, if miekg/dns knows one.
func typeString(qt uint16) (string, bool) {
	s, ok := dns.TypeToString[qt]
	return s, ok
}

// parseRR parses stored RDATA (zone-file text) as one RR of type qt.
func parseRR(qt uint16, mnemonic string, known bool, data []byte) dns.RR {
	for _, c := range data {
		if c == '\n' || c == '\r' {
			return nil // one RR only: no second line, no $INCLUDE
		}
	}
	if !known {
		mnemonic = "TYPE" + strconv.Itoa(int(qt))
	}
	rr, err := dns.NewRR(". 0 IN " + mnemonic + " " + string(data))
	if err != nil || rr == nil || rr.Header().Rrtype != qt {
		return nil
	}
	if t, ok := rr.(*dns.TXT); ok && len(t.Txt) == 0 {
		return nil // miekg/dns would pack it with no character-string at all
	}
	return rr
}

// ownersOnly reports whether the only compressible names in m are answer owners
// spelled exactly like the question name: no authority records, additional
// records with the root name only (the OPT), and answers whose RDATA holds no
// name (the types below; RFC 3597 §4 lists the ones whose names compress).
func ownersOnly(m *dns.Msg) bool {
	if len(m.Question) != 1 || len(m.Answer) == 0 || len(m.Ns) != 0 {
		return false
	}
	for _, rr := range m.Extra {
		if rr.Header().Name != "." {
			return false
		}
	}
	q := m.Question[0].Name
	for _, rr := range m.Answer {
		switch rr.(type) {
		case *dns.TXT, *dns.URI, *dns.A, *dns.AAAA:
		default:
			return false
		}
		if rr.Header().Name != q {
			return false
		}
	}
	return true
}

// compressOwners rewrites an uncompressed message in place: the owner of each
// of the first n answer RRs, if it is the same wire name as the question's,
// becomes a pointer to the question name at offset 12 (RFC 1035 §4.1.4). It
// stops at the first RR that does not match; every step leaves a valid message.
func compressOwners(msg []byte, n int) []byte {
	const qname = 12 // the question name follows the header
	end := qname
	for {
		if end >= len(msg) || msg[end]&0xC0 != 0 {
			return msg
		}
		if msg[end] == 0 {
			end++
			break
		}
		end += 1 + int(msg[end])
	}
	name := end - qname
	if name <= 2 {
		return msg // the root: a pointer saves nothing
	}
	off := end + 4 // after QTYPE and QCLASS
	for range n {
		if off+name+10 > len(msg) || string(msg[off:off+name]) != string(msg[qname:end]) {
			return msg
		}
		copy(msg[off+2:], msg[off+name:])
		msg = msg[:len(msg)-(name-2)]
		msg[off], msg[off+1] = 0xC0, qname
		rdlen := int(msg[off+10])<<8 | int(msg[off+11])
		off += 2 + 10 + rdlen
	}
	return msg
}
