package hdl

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strconv"

	"pidnode/handlev"
	"pidnode/handlev/hsmsg"
)

// hashByAll is CNRI SiteInfo.HASH_TYPE_BY_ALL, the default hash option (the JSON
// form omits it).
const hashByAll = 2

// SiteInfoJSON renders the HS_SITE value of a node configured with cfg (publishing
// pub, nil for none) in the reference server's siteinfo.json form (CNRI
// GsonUtility SiteInfoGsonTypeAdapter, pretty-printed with two spaces): version,
// protocolVersion, serialNumber, primarySite, multiPrimary, [hashOption],
// attributes, servers with serverId, address, publicKey ({format:"key", value:
// {kty, n, e}} or {format:"base64", value:""} without a key) and interfaces. An
// operator hands it to the Global Handle Registry to home prefixes on this node;
// a Handle client's resolver_site accepts it.
func SiteInfoJSON(cfg SiteConfig, pub *rsa.PublicKey) ([]byte, error) {
	site := BuildSite(cfg, pub)
	return siteJSON(&site)
}

type jsonSite struct {
	Version         int             `json:"version"`
	ProtocolVersion string          `json:"protocolVersion"`
	SerialNumber    int             `json:"serialNumber"`
	PrimarySite     bool            `json:"primarySite"`
	MultiPrimary    bool            `json:"multiPrimary"`
	HashOption      *int            `json:"hashOption,omitempty"`
	HashFilter      string          `json:"hashFilter,omitempty"`
	Attributes      []jsonAttribute `json:"attributes"`
	Servers         []jsonServer    `json:"servers"`
}

type jsonAttribute struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type jsonServer struct {
	ServerID   uint32          `json:"serverId"`
	Address    string          `json:"address"`
	PublicKey  jsonData        `json:"publicKey"`
	Interfaces []jsonInterface `json:"interfaces"`
}

type jsonData struct {
	Format string `json:"format"`
	Value  any    `json:"value"`
}

type jsonKey struct {
	Kty string `json:"kty"`
	N   string `json:"n"`
	E   string `json:"e"`
}

type jsonInterface struct {
	Query    bool   `json:"query"`
	Admin    bool   `json:"admin"`
	Protocol any    `json:"protocol"`
	Port     uint32 `json:"port"`
}

func siteJSON(s *hsmsg.Site) ([]byte, error) {
	j := jsonSite{
		Version:         int(s.DataFormatVersion),
		ProtocolVersion: itoa(int(s.Major)) + "." + itoa(int(s.Minor)),
		SerialNumber:    int(s.Serial),
		PrimarySite:     s.Primary,
		MultiPrimary:    s.MultiPrimary,
		HashFilter:      string(s.HashFilter),
		Attributes:      []jsonAttribute{},
		Servers:         []jsonServer{},
	}
	if s.HashOption != hashByAll {
		h := int(s.HashOption)
		j.HashOption = &h
	}
	for _, a := range s.Attributes {
		j.Attributes = append(j.Attributes, jsonAttribute(a))
	}
	for i := range s.Servers {
		sv := &s.Servers[i]
		js := jsonServer{ServerID: sv.ID, Address: sv.Addr().String(), Interfaces: []jsonInterface{}}
		if pub, err := hsmsg.ParseRSAPublicKey(sv.PublicKey); err == nil {
			js.PublicKey = jsonData{Format: "key", Value: jsonKey{
				Kty: "RSA",
				N:   base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
				E:   base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
			}}
		} else {
			js.PublicKey = jsonData{Format: "base64", Value: base64.StdEncoding.EncodeToString(sv.PublicKey)}
		}
		for _, f := range sv.Interfaces {
			ji := jsonInterface{Query: f.Type&hsmsg.IfQuery != 0, Admin: f.Type&hsmsg.IfAdmin != 0, Port: f.Port}
			switch f.Protocol {
			case hsmsg.ProtoUDP:
				ji.Protocol = "UDP"
			case hsmsg.ProtoTCP:
				ji.Protocol = "TCP"
			case hsmsg.ProtoHTTP:
				ji.Protocol = "HTTP"
			case hsmsg.ProtoHTTPS:
				ji.Protocol = "HTTPS"
			default:
				ji.Protocol = int(f.Protocol)
			}
			js.Interfaces = append(js.Interfaces, ji)
		}
		j.Servers = append(j.Servers, js)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&j); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// SiteValue returns the node's HS_SITE as a handle value (type HS_SITE, index
// index, public read), the form a prefix handle 0.NA/<prefix> (or a 0.SITE/…
// handle) carries to home the prefix on this node. Its data is what GET_SITE_INFO
// returns and round-trips through handlev's value codec and hsmsg.DecodeSite.
func SiteValue(cfg SiteConfig, pub *rsa.PublicKey, index int32) handlev.Value {
	site := BuildSite(cfg, pub)
	return handlev.Value{
		Index: index,
		Type:  handlev.TypeSite,
		Data:  hsmsg.AppendSite(nil, &site),
		TTL:   86400,
		Perm:  handlev.PermDefault,
	}
}
