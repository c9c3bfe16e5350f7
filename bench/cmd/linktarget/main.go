// Command linktarget is the site the link checker's benchmark checks
// (bench/internal/suite, docs/product.md §4.4): it listens on one port on each of
// -hosts loopback addresses 127.0.1.1, 127.0.1.2, … (distinct hosts to the
// checker, whose politeness is per host), answers every request 200 with
// an empty body, and writes the port to -ready-file. Loopback only.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
)

func main() {
	hosts := flag.Int("hosts", 64, "loopback addresses 127.0.1.1 … 127.0.1.N to listen on (at most 250)")
	ready := flag.String("ready-file", "", "write the port here once listening")
	flag.Parse()
	if *hosts < 1 || *hosts > 250 {
		fmt.Fprintln(os.Stderr, "linktarget: -hosts from 1 to 250")
		os.Exit(2)
	}
	var served atomic.Uint64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusOK)
	})
	var lns []net.Listener
	port := 0
	for try := 0; try < 50 && len(lns) < *hosts; try++ {
		for _, l := range lns {
			l.Close()
		}
		lns = lns[:0]
		port = 20000 + rand.IntN(30000)
		for i := 1; i <= *hosts; i++ {
			l, err := net.Listen("tcp4", "127.0.1."+strconv.Itoa(i)+":"+strconv.Itoa(port))
			if err != nil {
				break
			}
			lns = append(lns, l)
		}
	}
	if len(lns) < *hosts {
		fmt.Fprintln(os.Stderr, "linktarget: found no port free on every address")
		os.Exit(1)
	}
	for _, l := range lns {
		go http.Serve(l, h)
	}
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "linktarget:", err)
			os.Exit(1)
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	fmt.Fprintf(os.Stderr, "linktarget: served %d requests\n", served.Load())
}
