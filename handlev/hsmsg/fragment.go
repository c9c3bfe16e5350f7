package hsmsg

// UDP fragmentation (docs/handle-protocol.md §3.1): a message longer than MaxUDPPayload
// is sent in MaxUDPPayload-byte pieces, each behind the full envelope with
// MessageLength = the total length and SequenceNumber = the piece number; the
// receiver places piece n at n×MaxUDPPayload.

// NumPieces returns the number of datagrams a message of n bytes takes.
func NumPieces(n int) int {
	if n <= MaxUDPPayload {
		return 1
	}
	return (n + MaxUDPPayload - 1) / MaxUDPPayload
}

// AppendPiece appends datagram i of msg: env with SequenceNumber = i,
// MessageLength = len(msg) and, when msg takes more than one datagram, the TC flag,
// followed by the piece's bytes.
func AppendPiece(dst []byte, env Envelope, msg []byte, i int) []byte {
	env.SequenceNumber = uint32(i)
	env.MessageLength = uint32(len(msg))
	if NumPieces(len(msg)) > 1 {
		env.Flags |= EnvTruncated
	} else {
		env.Flags &^= EnvTruncated
	}
	dst = AppendEnvelope(dst, &env)
	lo := i * MaxUDPPayload
	hi := min(lo+MaxUDPPayload, len(msg))
	return append(dst, msg[lo:hi]...)
}

// Assembly collects the pieces of one message. It is not safe for concurrent use.
type Assembly struct {
	Envelope Envelope // of the first piece received
	buf      []byte
	got      []uint64 // bitset of pieces received
	have     int
}

// NewAssembly starts assembling the message announced by env (MessageLength is
// already checked against MaxMessageLen by ParseEnvelope).
func NewAssembly(env Envelope) *Assembly {
	n := NumPieces(int(env.MessageLength))
	return &Assembly{
		Envelope: env,
		buf:      make([]byte, env.MessageLength),
		got:      make([]uint64, (n+63)/64),
	}
}

// Add places one piece. It reports whether the message is complete. A piece of
// another message (request id, session id or length differ), with a piece number
// out of range or of the wrong size is ErrFragment; a duplicate is ignored.
func (a *Assembly) Add(env *Envelope, payload []byte) (bool, error) {
	if env.RequestID != a.Envelope.RequestID || env.SessionID != a.Envelope.SessionID ||
		env.MessageLength != a.Envelope.MessageLength {
		return false, ferr(8, "fragment identity", ErrFragment)
	}
	total := len(a.buf)
	n := NumPieces(total)
	i := int(env.SequenceNumber)
	if env.SequenceNumber >= uint32(n) {
		return false, ferr(12, "fragment sequence number", ErrFragment)
	}
	want := MaxUDPPayload
	if i == n-1 {
		want = total - i*MaxUDPPayload
	}
	if len(payload) != want {
		return false, ferr(EnvelopeLen, "fragment length", ErrFragment)
	}
	if a.got[i/64]&(1<<(i%64)) != 0 {
		return a.have == n, nil
	}
	a.got[i/64] |= 1 << (i % 64)
	a.have++
	copy(a.buf[i*MaxUDPPayload:], payload)
	return a.have == n, nil
}

// Message returns the assembled message bytes (valid once Add reported completion).
func (a *Assembly) Message() []byte { return a.buf }

// Size is the memory the assembly holds, for callers that bound the total.
func (a *Assembly) Size() int { return len(a.buf) + 8*len(a.got) }
