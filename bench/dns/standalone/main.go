// Command standalone serves pidnode's DNS front alone for the DNS benchmark
// (bench/dns/run.sh): the real store, cache and resolver/dns wired the way
// cmd/pidnode wires them, without the other listeners. run.sh uses it only when
// the pidnode binary does not serve DNS (it says so in its output).
//
//	standalone -data DIR -jsonl records.jsonl -zone hdl.example.org=21.T12345 -ready-file ready
//
// It imports the JSON Lines file into a fresh database under -data, then writes
// "dns ADDR" to -ready-file and serves until SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"pidnode/cache"
	"pidnode/handlev"
	hdldns "pidnode/resolver/dns"
	"pidnode/store"
)

func main() {
	var (
		data   = flag.String("data", "", "data directory (required)")
		jsonl  = flag.String("jsonl", "", "JSON Lines records to import first")
		zone   = flag.String("zone", "hdl.example.org=21.T12345", "ZONE=PREFIX")
		prefix = flag.String("prefix", "21.12345", "production prefix")
		test   = flag.String("test-prefix", "21.T12345", "test prefix")
		addr   = flag.String("addr", "127.0.0.1:0", "listen address (UDP and TCP)")
		ready  = flag.String("ready-file", "", "write 'dns ADDR' here once listening")
		prof   = flag.String("cpuprofile", "", "write a CPU profile of the serving time here")
	)
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*data, *jsonl, *zone, *prefix, *test, *addr, *ready); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

func run(data, jsonl, zone, prefix, test, addr, ready string) error {
	if data == "" {
		return fmt.Errorf("-data is required")
	}
	zn, zp, ok := strings.Cut(zone, "=")
	if !ok {
		return fmt.Errorf("-zone %q: want ZONE=PREFIX", zone)
	}
	namer, err := handlev.NewNamer(handlev.NamerConfig{Prefix: prefix, TestPrefix: test})
	if err != nil {
		return err
	}
	db, err := store.Open(store.Config{Path: filepath.Join(data, "pidnode.db")})
	if err != nil {
		return err
	}
	defer db.Close()
	if jsonl != "" {
		f, err := os.Open(jsonl)
		if err != nil {
			return err
		}
		n, err := db.Import(f, func(h string) (string, error) {
			k, _, err := namer.Key(h)
			return k, err
		})
		f.Close()
		if err != nil {
			return err
		}
		log.Printf("imported %d records", n)
	}
	c, err := cache.New(cache.Config{Source: db, Alt: namer.AppendAltKey})
	if err != nil {
		return err
	}
	srv, err := hdldns.New(hdldns.Config{Cache: c, Namer: namer, Zones: []hdldns.Zone{{Name: zn, Prefix: zp}}})
	if err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.ServeUDP(pc) }()
	go func() { errc <- srv.ServeTCP(ln) }()
	if ready != "" {
		if err := os.WriteFile(ready+".tmp", []byte("dns "+pc.LocalAddr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(ready+".tmp", ready); err != nil {
			return err
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case err := <-errc:
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := srv.Stats()
	log.Printf("queries %d noerror %d nxdomain %d", st.Queries, st.NoError, st.NXDomain)
	return srv.Shutdown(ctx)
}
