package hdl_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"pidnode/handlev/hsmsg"
	"pidnode/resolver/hdl"
)

// TestReplyHeaderSite: every reply header carries the node's HS_SITE serial
// number in SiteInfoSerialNumber (bytes 12–13 of the message header) and sets
// the AT flag (0x80000000 of OpFlag, bytes 8–11) exactly when the site is
// primary, whatever the request's AT bit and serial say (RFC 3652 §2.2.2).
// Checked on the raw bytes of real replies over TCP and UDP, for a found
// handle, a missing one and GET_SITE_INFO.
func TestReplyHeaderSite(t *testing.T) {
	tests := []struct {
		name   string
		site   hdl.SiteConfig
		serial uint16
		at     bool
	}{
		{"primary, default serial", hdl.SiteConfig{}, 1, true},
		{"primary, serial 7", hdl.SiteConfig{Serial: 7}, 7, true},
		{"mirror, serial 300", hdl.SiteConfig{Serial: 300, NotPrimary: true}, 300, false},
	}
	for _, tt := range tests {
		n := startSiteNode(t, tt.site, nil, records()...)
		for _, udp := range []bool{false, true} {
			for _, reqAT := range []bool{false, true} {
				flags := hsmsg.FlagsJava
				if reqAT {
					flags |= hsmsg.FlagAT
				}
				for _, op := range []string{"found", "not found", "site info"} {
					t.Run(fmt.Sprintf("%s/udp=%v/requestAT=%v/%s", tt.name, udp, reqAT, op), func(t *testing.T) {
						c := n.client(udp)
						var rep *hdl.Response
						var err error
						wantRC := hsmsg.RCSuccess
						switch op {
						case "found":
							rep, err = c.Resolve(context.Background(), "20.500.1/SMALL", nil, nil, flags)
						case "not found":
							rep, err = c.Resolve(context.Background(), "20.500.1/NOPE", nil, nil, flags)
							wantRC = hsmsg.RCHandleNotFound
						default:
							rep, err = c.SiteInfo(context.Background(), flags)
						}
						if err != nil {
							t.Fatal(err)
						}
						raw := rep.Raw
						if len(raw) < hsmsg.HeaderLen {
							t.Fatalf("reply of %d bytes, shorter than a header", len(raw))
						}
						if rc := binary.BigEndian.Uint32(raw[4:8]); rc != wantRC {
							t.Fatalf("ResponseCode %d, want %d", rc, wantRC)
						}
						opFlag := binary.BigEndian.Uint32(raw[8:12])
						if got := opFlag&0x80000000 != 0; got != tt.at {
							t.Errorf("OpFlag %08x: AT = %v, want %v", opFlag, got, tt.at)
						}
						if got := binary.BigEndian.Uint16(raw[12:14]); got != tt.serial {
							t.Errorf("SiteInfoSerialNumber bytes %x = %d, want %d", raw[12:14], got, tt.serial)
						}
						if op == "site info" && (rep.Site == nil || rep.Site.Serial != tt.serial || rep.Site.Primary != tt.at) {
							t.Errorf("HS_SITE %+v, want serial %d primary %v (the header's)", rep.Site, tt.serial, tt.at)
						}
					})
				}
			}
		}
	}
}
