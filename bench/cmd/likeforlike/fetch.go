package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// header is one response header line as sent.
type header struct{ Name, Value string }

// response is one HTTP/1.1 response as it came over the wire.
type response struct {
	StatusLine string
	Status     int
	Headers    []header
	Body       []byte
	HeadBytes  int // status line, header lines and the empty line, CRLFs included
}

func (r *response) Total() int { return r.HeadBytes + len(r.Body) }

// get returns the values of header name (case-insensitive), in order.
func (r *response) get(name string) []string {
	var vs []string
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, name) {
			vs = append(vs, h.Value)
		}
	}
	return vs
}

// conn is one keep-alive connection to a server, sending requests shaped like
// wrk's (GET, Host, optionally Accept).
type conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{addr: addr, c: c, br: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (c *conn) Close() error { return c.c.Close() }

// do sends GET target and reads the response: Content-Length bodies only (every
// server here sends one; chunked is an error).
func (c *conn) do(target, accept string) (*response, error) {
	if err := c.c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return nil, err
	}
	req := "GET " + target + " HTTP/1.1\r\nHost: " + c.addr + "\r\n"
	if accept != "" {
		req += "Accept: " + accept + "\r\n"
	}
	req += "\r\n"
	if _, err := io.WriteString(c.c, req); err != nil {
		return nil, err
	}
	r := &response{}
	line, err := c.br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	r.HeadBytes += len(line)
	r.StatusLine = strings.TrimRight(line, "\r\n")
	parts := strings.SplitN(r.StatusLine, " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/1.") {
		return nil, fmt.Errorf("%s: bad status line %q", c.addr, r.StatusLine)
	}
	if r.Status, err = strconv.Atoi(parts[1]); err != nil {
		return nil, fmt.Errorf("%s: bad status line %q", c.addr, r.StatusLine)
	}
	length := -1
	for {
		line, err := c.br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		r.HeadBytes += len(line)
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s: bad header line %q", c.addr, line)
		}
		value = strings.TrimSpace(value)
		r.Headers = append(r.Headers, header{name, value})
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.Atoi(value); err != nil || length < 0 {
				return nil, fmt.Errorf("%s: bad Content-Length %q", c.addr, value)
			}
		case "transfer-encoding":
			return nil, errors.New(c.addr + ": chunked responses are not read here")
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%s: %s without Content-Length", c.addr, target)
	}
	r.Body = make([]byte, length)
	if _, err := io.ReadFull(c.br, r.Body); err != nil {
		return nil, err
	}
	return r, nil
}

// fetchOne fetches target from addr over a fresh connection.
func fetchOne(addr, target, accept string) (*response, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.do(target, accept)
}

// distinctPaths returns the first n (0: all) distinct lines of a request
// stream, in order of first appearance.
func distinctPaths(data []byte, n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		p := string(bytes.TrimSpace(l))
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		if n > 0 && len(out) == n {
			break
		}
	}
	return out
}
