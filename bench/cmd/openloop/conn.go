package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"time"

	"pidnode/internal/ascii"
)

// A wire is one keep-alive HTTP/1.1 connection driven by one goroutine. It
// writes pre-built request bytes and reads just enough of each response to
// find its status and where it ends (Content-Length), so that the load core
// spends its time in the kernel's socket calls, not in client bookkeeping:
// a general-purpose client (fasthttp's HostClient with its pool, header
// serialization and full response parsing) capped one load core near 40k
// req/s, below the servers' capacity, and the generator's own queueing then
// showed up as the server's tail latency.
type wire struct {
	addr     string
	deadline time.Time // the run's hard limit: no read or write outlives it
	c        net.Conn
	br       *bufio.Reader
}

var errChunked = errors.New("chunked response bodies are not supported")

// roundTrip sends req (a complete request) and returns the response's status
// code. On any error the connection is closed; the next call dials anew.
func (w *wire) roundTrip(req []byte) (int, error) {
	if w.c == nil {
		c, err := net.DialTimeout("tcp", w.addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		if err := c.SetDeadline(w.deadline); err != nil {
			c.Close()
			return 0, err
		}
		w.c = c
		if w.br == nil {
			w.br = bufio.NewReaderSize(c, 64<<10)
		} else {
			w.br.Reset(c)
		}
	}
	status, keep, err := w.exchange(req)
	if err != nil || !keep {
		w.close()
	}
	return status, err
}

// close closes the connection, if one is open.
func (w *wire) close() {
	if w.c != nil {
		w.c.Close()
		w.c = nil
	}
}

func (w *wire) exchange(req []byte) (status int, keep bool, err error) {
	if _, err := w.c.Write(req); err != nil {
		return 0, false, err
	}
	return readResponse(w.br)
}

// readResponse reads one HTTP/1.1 response head and skips its body. keep is
// false when the server said it will close the connection.
func readResponse(br *bufio.Reader) (status int, keep bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 302 Found\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, fmt.Errorf("bad status line %q", line)
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	length, keep := -1, true
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		if len(line) <= 2 { // the blank line ending the head
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case ascii.EqualFold(name, "content-length"):
			n := 0
			for _, c := range value {
				if c < '0' || c > '9' || n > 1<<30 {
					return 0, false, fmt.Errorf("bad Content-Length %q", value)
				}
				n = n*10 + int(c-'0')
			}
			length = n
		case ascii.EqualFold(name, "transfer-encoding"):
			return 0, false, errChunked
		case ascii.EqualFold(name, "connection"):
			if ascii.EqualFold(value, "close") {
				keep = false
			}
		}
	}
	switch {
	case status == 204 || status == 304 || (status >= 100 && status < 200):
		length = 0
	case length < 0: // body runs to the end of the connection
		return status, false, nil
	}
	if _, err := br.Discard(length); err != nil {
		return 0, false, err
	}
	return status, keep, nil
}

// buildRequests turns request targets into complete GET requests.
func buildRequests(host string, targets [][]byte) [][]byte {
	reqs := make([][]byte, len(targets))
	for i, t := range targets {
		reqs[i] = fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", t, host)
	}
	return reqs
}
