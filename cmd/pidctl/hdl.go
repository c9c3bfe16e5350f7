package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// hdlClient is the native-protocol client the options describe.
func hdlClient(p *parsed) (*hdl.Client, error) {
	c := &hdl.Client{Addr: "127.0.0.1:2641", UDP: p.v("udp") == "true", Timeout: 10 * time.Second}
	if s := p.v("server"); s != "" {
		c.Addr = s
	}
	if s := p.v("timeout"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--timeout %q: want a duration such as 10s", s)
		}
		c.Timeout = d
	}
	return c, nil
}

// hdlResolve is `pidctl hdl resolve`: one resolution request to a node's native
// Handle protocol interface (TCP, or UDP with --udp), the reply printed. Exit
// status 0 on RC 1, 1 on any other response code, 2 on usage or network errors.
func hdlResolve(p *parsed, stdout, stderr io.Writer) int {
	if len(p.pos) != 1 {
		return usageError(stderr, p.cmd, "want exactly one HANDLE")
	}
	c, err := hdlClient(p)
	if err != nil {
		return usageError(stderr, p.cmd, err.Error())
	}
	var indexes []int32
	for _, s := range p.lists["index"] {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return usageError(stderr, p.cmd, fmt.Sprintf("--index %q: want an integer", s))
		}
		indexes = append(indexes, int32(n))
	}
	h := p.pos[0]
	rep, err := c.Resolve(context.Background(), h, indexes, p.lists["type"], 0)
	if err != nil {
		fmt.Fprintf(stderr, "pidctl hdl resolve: %v\n", err)
		return 2
	}
	if rc := rep.Header.ResponseCode; rc != hsmsg.RCSuccess {
		fmt.Fprintf(stderr, "pidctl hdl resolve: %s: %s\n", h, rcText(rc, rep.ErrorMessage))
		return 1
	}
	if p.v("json") == "true" {
		stdout.Write(append(handlev.AppendRecordJSON(nil, string(rep.Handle), rep.Values), '\n'))
		return 0
	}
	fmt.Fprintf(stdout, "%s\t%d values\n", rep.Handle, len(rep.Values))
	for i := range rep.Values {
		v := &rep.Values[i]
		fmt.Fprintf(stdout, "%d\t%s\t%s\n", v.Index, v.Type, showData(v))
	}
	return 0
}

// hdlSiteinfo is `pidctl hdl siteinfo`: the node's HS_SITE, exit status as
// hdlResolve's.
func hdlSiteinfo(p *parsed, stdout, stderr io.Writer) int {
	if len(p.pos) != 0 {
		return usageError(stderr, p.cmd, "no arguments expected")
	}
	c, err := hdlClient(p)
	if err != nil {
		return usageError(stderr, p.cmd, err.Error())
	}
	rep, err := c.SiteInfo(context.Background(), 0)
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
