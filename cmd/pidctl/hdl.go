package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// runHDL runs `pidctl hdl …` with the process's standard streams.
func runHDL(args []string) int { return hdlMain(args, os.Stdout, os.Stderr) }

// hdlMain implements `pidctl hdl resolve` and `pidctl hdl siteinfo`: one request
// to a node's native Handle protocol interface (TCP, or UDP with --udp), the reply
// printed. Exit status 0 on RC 1, 1 on any other response code, 2 on usage or
// network errors.
func hdlMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: pidctl hdl resolve HANDLE --server HOST:PORT [--udp] [--type T]… [--index N]… [--json]")
		fmt.Fprintln(stderr, "       pidctl hdl siteinfo --server HOST:PORT [--udp]")
		return 2
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("pidctl hdl "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "127.0.0.1:2641", "the node's native protocol address `host:port`")
	udp := fs.Bool("udp", false, "use UDP instead of TCP")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit for the exchange")
	asJSON := fs.Bool("json", false, "print the record as Handle JSON")
	var types stringList
	var indexes intList
	fs.Var(&types, "type", "only values of this `type` (repeatable; \"URL.\" includes subtypes)")
	fs.Var(&indexes, "index", "only the value with this `index` (repeatable)")
	// Flags may come before or after the handle.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	c := &hdl.Client{Addr: *server, UDP: *udp, Timeout: *timeout}
	ctx := context.Background()
	switch sub {
	case "resolve":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "pidctl hdl resolve: want exactly one HANDLE")
			return 2
		}
		rep, err := c.Resolve(ctx, pos[0], indexes, types, 0)
		if err != nil {
			fmt.Fprintf(stderr, "pidctl hdl resolve: %v\n", err)
			return 2
		}
		if rc := rep.Header.ResponseCode; rc != hsmsg.RCSuccess {
			fmt.Fprintf(stderr, "pidctl hdl resolve: %s: %s\n", pos[0], rcText(rc, rep.ErrorMessage))
			return 1
		}
		if *asJSON {
			stdout.Write(append(handlev.AppendRecordJSON(nil, string(rep.Handle), rep.Values), '\n'))
			return 0
		}
		fmt.Fprintf(stdout, "%s\t%d values\n", rep.Handle, len(rep.Values))
		for i := range rep.Values {
			v := &rep.Values[i]
			fmt.Fprintf(stdout, "%d\t%s\t%s\n", v.Index, v.Type, showData(v))
		}
		return 0
	case "siteinfo":
		if len(pos) != 0 {
			fmt.Fprintln(stderr, "pidctl hdl siteinfo: no arguments expected")
			return 2
		}
		rep, err := c.SiteInfo(ctx, 0)
		if err != nil {
			fmt.Fprintf(stderr, "pidctl hdl siteinfo: %v\n", err)
			return 2
		}
		if rc := rep.Header.ResponseCode; rc != hsmsg.RCSuccess || rep.Site == nil {
			fmt.Fprintf(stderr, "pidctl hdl siteinfo: %s\n", rcText(rc, rep.ErrorMessage))
			return 1
		}
		s := rep.Site
		fmt.Fprintf(stdout, "protocol %d.%d serial %d primary %v\n", s.Major, s.Minor, s.Serial, s.Primary)
		for _, a := range s.Attributes {
			fmt.Fprintf(stdout, "attribute %s=%s\n", a.Name, a.Value)
		}
		for i := range s.Servers {
			sv := &s.Servers[i]
			key := "no key"
			if len(sv.PublicKey) > 0 {
				key = "key " + strconv.Itoa(len(sv.PublicKey)) + " bytes"
			}
			fmt.Fprintf(stdout, "server %d %s %s\n", sv.ID, sv.Addr(), key)
			for _, f := range sv.Interfaces {
				fmt.Fprintf(stdout, "  interface %s %s port %d\n", ifType(f.Type), protoName(f.Protocol), f.Port)
			}
		}
		return 0
	default:
		fmt.Fprintf(stderr, "pidctl hdl: unknown subcommand %q (want resolve or siteinfo)\n", sub)
		return 2
	}
}

// showData renders a value's data for a terminal: HS_ADMIN decoded, UTF-8 text as
// is (control characters quoted), anything else as hex.
func showData(v *handlev.Value) string {
	if strings.EqualFold(v.Type, handlev.TypeAdmin) {
		if a, err := handlev.DecodeAdmin(v.Data); err == nil {
			return fmt.Sprintf("handle=%s index=%d perms=%04x", a.Handle, a.Index, a.Mask)
		}
	}
	if utf8.Valid(v.Data) {
		s := string(v.Data)
		if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7F }) {
			return strconv.Quote(s)
		}
		return s
	}
	return fmt.Sprintf("hex:%x", v.Data)
}

var rcNames = map[uint32]string{
	1: "SUCCESS", 2: "ERROR", 3: "SERVER TOO BUSY", 4: "PROTOCOL ERROR", 5: "OPERATION NOT SUPPORTED",
	6: "RECURSION COUNT TOO HIGH", 7: "SERVER BACKUP", 100: "HANDLE NOT FOUND", 101: "HANDLE ALREADY EXISTS",
	102: "INVALID HANDLE", 200: "VALUES NOT FOUND", 201: "VALUE ALREADY EXISTS", 202: "INVALID VALUE",
	300: "OUT OF DATE SITE INFO", 301: "SERVER NOT RESPONSIBLE FOR HANDLE", 302: "SERVICE REFERRAL",
	303: "PREFIX REFERRAL", 400: "INVALID ADMIN", 401: "INSUFFICIENT PERMISSIONS", 402: "AUTHENTICATION NEEDED",
	403: "AUTHENTICATION FAILED", 404: "INVALID CREDENTIAL", 405: "AUTHENTICATION TIMEOUT", 406: "AUTHENTICATION ERROR",
}

func rcText(rc uint32, msg []byte) string {
	s := "RC " + strconv.FormatUint(uint64(rc), 10)
	if n, ok := rcNames[rc]; ok {
		s += " " + n
	}
	if len(msg) > 0 {
		s += ": " + string(msg)
	}
	return s
}

func ifType(t uint8) string {
	switch t {
	case hsmsg.IfAdmin:
		return "admin"
	case hsmsg.IfQuery:
		return "query"
	case hsmsg.IfBoth:
		return "admin+query"
	}
	return "type" + strconv.Itoa(int(t))
}

func protoName(p uint8) string {
	switch p {
	case hsmsg.ProtoUDP:
		return "UDP"
	case hsmsg.ProtoTCP:
		return "TCP"
	case hsmsg.ProtoHTTP:
		return "HTTP"
	case hsmsg.ProtoHTTPS:
		return "HTTPS"
	}
	return "protocol" + strconv.Itoa(int(p))
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

type intList []int32

func (l *intList) String() string { return fmt.Sprint([]int32(*l)) }
func (l *intList) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return err
	}
	*l = append(*l, int32(n))
	return nil
}
