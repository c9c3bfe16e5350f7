// Command baseline is the reference point of the DNS benchmark (bench/dns/run.sh):
// a bare miekg/dns server answering TXT from a Go map, for the same
// names and URLs that pidnode serves from its store and cache.
//
// It also generates the benchmark's data, so both servers see the same names:
//
//	baseline -gen -n 10000 -jsonl records.jsonl -queries queries.txt
//	baseline -n 10000 -addr 127.0.0.1:0 -ready-file ready
//
// The records are handles PREFIX/svc/BEN/<ID> with one URL value (JSON Lines for
// `pidnode import`); the query file has one "<id>.ben.svc.<zone> TXT" line per
// record (dnsperf's format). The server writes "dns ADDR" to -ready-file once
// its UDP socket is bound, like pidnode's --ready-file, and stops on SIGINT/SIGTERM.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/miekg/dns"
)

func main() {
	var (
		gen     = flag.Bool("gen", false, "write -jsonl and -queries and exit")
		n       = flag.Int("n", 10000, "number of identifiers")
		zone    = flag.String("zone", "hdl.example.org", "DNS zone")
		prefix  = flag.String("prefix", "21.T12345", "handle prefix the zone maps to")
		jsonl   = flag.String("jsonl", "records.jsonl", "with -gen: JSON Lines records to write")
		queries = flag.String("queries", "queries.txt", "with -gen: dnsperf query file to write")
		addr    = flag.String("addr", "127.0.0.1:0", "listen address (UDP and TCP)")
		ready   = flag.String("ready-file", "", "write 'dns ADDR' here once listening")
	)
	flag.Parse()
	z := dns.Fqdn(strings.ToLower(*zone))
	if *gen {
		if err := generate(*n, z, *prefix, *jsonl, *queries); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := serve(*n, z, *addr, *ready); err != nil {
		log.Fatal(err)
	}
}

// id is the i-th identifier: 9 characters, like a generated pidnode id.
func id(i int) string { return fmt.Sprintf("B%08d", i) }

func url(i int) string { return "https://example.org/landing/" + id(i) }

// owner is the DNS name of the i-th identifier under zone z (lower case).
func owner(i int, z string) string { return strings.ToLower(id(i)) + ".ben.svc." + z }

func generate(n int, z, prefix, jsonlPath, queriesPath string) error {
	jf, err := os.Create(jsonlPath)
	if err != nil {
		return err
	}
	defer jf.Close()
	qf, err := os.Create(queriesPath)
	if err != nil {
		return err
	}
	defer qf.Close()
	jw, qw := bufio.NewWriter(jf), bufio.NewWriter(qf)
	for i := range n {
		fmt.Fprintf(jw, `{"handle":"%s/svc/BEN/%s","values":[{"index":1,"type":"URL","data":{"format":"string","value":"%s"},"ttl":86400},{"index":2,"type":"STATUS","data":{"format":"string","value":"REGISTERED"},"ttl":86400}]}`+"\n",
			prefix, id(i), url(i))
		fmt.Fprintf(qw, "%s TXT\n", owner(i, z))
	}
	if err := jw.Flush(); err != nil {
		return err
	}
	return qw.Flush()
}

// mapHandler answers TXT from a map of lower-case owner names: the least a
// server must do (no EDNS0, no compression, no zone logic).
type mapHandler map[string]string

func (h mapHandler) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if len(r.Question) == 1 {
		q := r.Question[0]
		if u, ok := h[strings.ToLower(q.Name)]; ok {
			if q.Qtype == dns.TypeTXT {
				m.Answer = append(m.Answer, &dns.TXT{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 86400},
					Txt: []string{u},
				})
			}
		} else {
			m.Rcode = dns.RcodeNameError
		}
	}
	w.WriteMsg(m)
}

func serve(n int, z, addr, ready string) error {
	h := make(mapHandler, n)
	for i := range n {
		h[owner(i, z)] = url(i)
	}
	pc, ln, err := listenBoth(addr)
	if err != nil {
		return err
	}
	udp := &dns.Server{PacketConn: pc, Handler: h}
	tcp := &dns.Server{Listener: ln, Handler: h}
	errc := make(chan error, 2)
	go func() { errc <- udp.ActivateAndServe() }()
	go func() { errc <- tcp.ActivateAndServe() }()
	if ready != "" {
		tmp := ready + ".tmp"
		if err := os.WriteFile(tmp, []byte("dns "+pc.LocalAddr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, ready); err != nil {
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
	udp.Shutdown()
	tcp.Shutdown()
	return nil
}

// listenBoth binds UDP and, on the same port, TCP (for clients that retry
// after TC). With port 0 the port the kernel gives the UDP socket can already
// be taken on TCP (an outgoing connection's local port, say): then it tries
// another, as pidnode's own listener does.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	var lastErr error
	for range 10 {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, err
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln, nil
		}
		pc.Close()
		lastErr = err
		if _, port, _ := net.SplitHostPort(addr); port != "0" {
			break
		}
	}
	return nil, nil, lastErr
}
