package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: baseline-hdl capture|serve [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "capture":
		err = capture(os.Args[2:])
	case "serve":
		err = serve(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (capture or serve)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline-hdl:", err)
		os.Exit(1)
	}
}

// reply is one line of the capture file.
type reply struct {
	Handle string `json:"handle"`
	Bytes  []byte `json:"reply"` // envelope + message, as pidnode sent them
}

func capture(args []string) error {
	fs := flag.NewFlagSet("baseline-hdl capture", flag.ContinueOnError)
	addr := fs.String("addr", "", "pidnode's native-protocol listener host:port")
	paths := fs.String("paths", "", "request stream, one /handle per line")
	out := fs.String("out", "", "capture file to write (JSON Lines)")
	workers := fs.Int("workers", 8, "concurrent resolutions")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" || *paths == "" || *out == "" {
		return errors.New("capture needs -addr, -paths and -out")
	}
	handles, err := distinct(*paths)
	if err != nil {
		return err
	}
	replies := make([]reply, len(handles))
	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	next := make(chan int)
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &hdl.Client{Addr: *addr, Timeout: 5 * time.Second}
			for i := range next {
				r, err := c.Resolve(context.Background(), handles[i], nil, nil, 0)
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", handles[i], err)
					continue
				}
				replies[i] = reply{Handle: handles[i], Bytes: append(hsmsg.AppendEnvelope(nil, &r.Envelope), r.Raw...)}
			}
		}()
	}
	for i := range handles {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range replies {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "baseline-hdl: %d replies captured\n", len(replies))
	return f.Close()
}

// distinct returns the distinct handles of a request stream, in order.
func distinct(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var hs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "/")
		if h != "" && !seen[h] {
			seen[h] = true
			hs = append(hs, h)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("%s: no handles", name)
	}
	return hs, nil
}

func load(name string) (map[string][]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string][]byte{}
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var r reply
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(r.Bytes) < hsmsg.EnvelopeLen {
			return nil, fmt.Errorf("%s: reply for %s shorter than an envelope", name, r.Handle)
		}
		m[r.Handle] = r.Bytes
	}
	return m, nil
}

func serve(args []string) error {
	fs := flag.NewFlagSet("baseline-hdl serve", flag.ContinueOnError)
	file := fs.String("replies", "", "capture file written by capture")
	addr := fs.String("addr", "127.0.0.1:0", "TCP listen address")
	ready := fs.String("ready-file", "", "write 'native ADDR' here once listening")
	if err := fs.Parse(args); err != nil {
		return err
	}
	replies, err := load(*file)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "baseline-hdl: %d replies\n", len(replies))
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte("native "+ln.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go answer(c, replies)
	}
}

// buffers are a connection's request and reply bytes, reused as pidnode's
// TCP front reuses its own, so the baseline pays no allocation per request.
type buffers struct{ in, out []byte }

var pool = sync.Pool{New: func() any { return new(buffers) }}

// answer reads one request from c, writes the captured reply for its handle
// with the request's RequestId and SessionId, and closes c.
func answer(c net.Conn, replies map[string][]byte) {
	defer c.Close()
	b := pool.Get().(*buffers)
	defer pool.Put(b)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var eb [hsmsg.EnvelopeLen]byte
	if _, err := io.ReadFull(c, eb[:]); err != nil {
		return
	}
	env, err := hsmsg.ParseEnvelope(eb[:])
	if err != nil {
		return
	}
	b.in = append(b.in[:0], make([]byte, env.MessageLength)...)
	if _, err := io.ReadFull(c, b.in); err != nil {
		return
	}
	m, err := hsmsg.ParseMessage(b.in)
	if err != nil {
		return
	}
	var q hsmsg.ResolutionRequest
	if err := q.Decode(m.Body); err != nil {
		return
	}
	rep, ok := replies[string(q.Handle)]
	if !ok {
		return
	}
	b.out = append(b.out[:0], rep...)
	binary.BigEndian.PutUint32(b.out[4:], env.SessionID)
	binary.BigEndian.PutUint32(b.out[8:], env.RequestID)
	c.Write(b.out)
}
