// Package conntimeout bounds how long a server connection may take to send a
// request, to read a response, and to stay idle between requests, with one
// sweeping goroutine per listener instead of socket deadlines set per request.
//
// Why: fasthttp's ReadTimeout, IdleTimeout and WriteTimeout move the
// connection's deadlines three times per request (idle, read, write), and
// each move reads the clock and re-arms a runtime timer, a visible share of
// a cached redirect's cost (BenchmarkDeadlineRequest measures it). A connection of this package only writes one word per read and
// per write (its phase, whether it is blocked in a call, and the sweep epoch
// it entered the phase in); the sweeper, every Tick, finds the connections
// blocked past their phase's limit and sets their deadline to the past. The
// blocked call then fails with a timeout exactly as a deadline would have
// made it (os.ErrDeadlineExceeded, a net.Error whose Timeout() is true), so
// the server answers and logs it as before: a 408 for a request that stopped
// arriving, a quiet close for an idle connection.
//
// The limits hold as fasthttp defines them, and only while a read or write is
// blocked: Read from the connection's accept (its first request) or from the
// first byte of a later request, until its response starts; Idle from the end
// of a response until the first byte of the next request; Write from the
// first byte of a response written (of the first of several, when pipelined
// requests are answered with no read between); Handshake from the accept
// until a TLS handshake the server starts itself (fasthttp does, outside any
// Read) is done, reads and writes alike. A limit never fires early; it
// fires at most about two Ticks late (more only while the sweeper itself
// cannot run).
//
// It must not be used where a caller sets its own deadlines on the same
// connection: the sweeper's deadline and the caller's would undo each other,
// so the connections refuse any deadline but none. The package imports the
// standard library only and knows nothing of HTTP; the resolver's Serve
// wraps its listener in it.
package conntimeout
