package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"
)

func main() {
	mapFile := flag.String("map", "bench/data/baseline-map.tsv", "path TAB url lines")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	ready := flag.String("ready-file", "", "write 'baseline ADDR' here once listening")
	flag.Parse()
	targets, err := load(*mapFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline-http:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp4", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline-http:", err)
		os.Exit(1)
	}
	notFound := []byte("not found\n")
	s := &fasthttp.Server{
		Name:                          "baseline",
		NoDefaultDate:                 false,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			// string(b) in a map index does not allocate.
			if t, ok := targets[string(ctx.Path())]; ok {
				ctx.Response.Header.SetStatusCode(fasthttp.StatusFound)
				ctx.Response.Header.SetBytesKV([]byte("Location"), t)
				return
			}
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			ctx.Response.SetBodyRaw(notFound)
		},
	}
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte("baseline "+ln.Addr().String()+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "baseline-http:", err)
			os.Exit(1)
		}
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		s.Shutdown()
	}()
	if err := s.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "baseline-http:", err)
		os.Exit(1)
	}
}

// load reads path TAB url lines into a map.
func load(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := make(map[string][]byte)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("%s: line %d has no tab", path, len(m)+1)
		}
		m[string(k)] = bytes.Clone(v)
	}
	return m, sc.Err()
}
