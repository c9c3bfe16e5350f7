package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"pidnode/handlev"
	"pidnode/read"
	"pidnode/registry"
)

// DemoNamespace is the namespace SeedDemo gives the demo SNAA.
const DemoNamespace = "DMO"

// DemoInfo describes what SeedDemo created.
type DemoInfo struct {
	SNAAID    string
	Namespace string
	// Key is the demo SNAA's API key secret (print it once; it is not stored).
	Key string
	// Handles are the demo identifiers under the production prefix, in creation
	// order: REGISTERED ones, then one SUBMITTED, then one OBSOLETED with an
	// IS_OBSOLETED_BY link to Handles[0].
	Handles []string
	// TestHandles are demo identifiers under the test prefix.
	TestHandles []string
	// LocHandle is the demo identifier with the custom id DemoLocID under the
	// production prefix, whose record also holds a 10320/loc value
	// (DemoLoc): several locations to choose among by country, role and
	// media type. Empty when the node has no production prefix.
	LocHandle string
}

// DemoLocID is the custom id of the demo identifier with locations, fixed so
// that the README's examples name it.
const DemoLocID = "LOC-1"

// DemoLoc is the 10320/loc value SeedDemo adds to the record of LocHandle
// (docs/handle-protocol.md §2.1).
const DemoLoc = `<locations chooseby="locatt,country,weighted">
<location href="https://eu.repository.demo-catalysis.example.org/samples/ni-sio2-2025-031" weight="1" country="de" view="html"/>
<location href="https://us.repository.demo-catalysis.example.org/samples/ni-sio2-2025-031" weight="0" country="us" view="html"/>
<location href="https://repository.demo-catalysis.example.org/samples/ni-sio2-2025-031.ttl" role="metadata" media-type="text/turtle" weight="0" http_sc="303"/>
</locations>`

// demoLocIndex is the index of the 10320/loc value: one the model does not
// manage, so that updates through the API keep it.
const demoLocIndex = 2

// SeedDemo fills an empty database (no SNAA yet) with a demo: an approved
// application, the SNAA "Demo Catalysis Lab" with namespace DMO under the
// production and the test prefix, its API key, and a handful of identifiers with
// realistic pid4cat metadata. It goes through the same handlers as the API, so
// the demo records are valid, audited and invalidated like any other. On a
// database that already has an SNAA it returns ErrNotEmpty and changes nothing.
func (s *Server) SeedDemo(ctx context.Context) (DemoInfo, error) {
	var info DemoInfo
	empty := true
	if err := s.reg.View(func(tx registry.Tx) error {
		empty = !tx.HasSNAAs()
		return nil
	}); err != nil {
		return info, err
	}
	if !empty {
		return info, ErrNotEmpty
	}
	app, err := s.SubmitApplication(ApplicationRequest{
		Organisation:          "Demo Catalysis Lab",
		TechnicalContact:      Contact{Name: "Dana Demo", Email: "pids@demo-catalysis.example.org"},
		AdministrativeContact: Contact{Name: "Alex Admin", Email: "office@demo-catalysis.example.org"},
		PolicyVersion:         "v1.0",
		MaintenanceStatement:  "Demo data: landing pages live on the lab's repository, curated by the data steward.",
	})
	if err != nil {
		return info, err
	}
	yes := true
	res, err := s.Approve(app.ID, ApproveRequest{Namespace: DemoNamespace, CustomIDs: &yes, Note: "demo SNAA created by --demo"})
	if err != nil {
		return info, err
	}
	info.SNAAID, info.Namespace, info.Key = res.SNAA.ID, res.SNAA.Namespace, res.Key.Secret

	for _, b := range s.bases {
		if b.prefix == "" {
			continue
		}
		coll := b.path + "/handles/" + b.prefix + "/" + DemoNamespace + "/"
		var made []string
		items := demoItems()
		if b.test {
			items = items[:2]
		}
		for i, it := range items {
			if it.obsoletes && len(made) > 0 {
				first := made[0]
				prefix, ns, id := read.SplitDisplay(first)
				short := prefix + "/" + ns + "/" + id
				it.meta["related_identifiers"] = []any{map[string]any{
					"relation_type": "IS_OBSOLETED_BY",
					"related_identifier": map[string]any{"type": "HandleIdentifier", "identifier": short,
						"resolving_url": "https://hdl.handle.net/" + short},
					"datetime_log": s.now().UTC().Format("2006-01-02T15:04:05Z"),
				}}
			}
			body, _ := json.Marshal(map[string]any{"url": it.url, "metadata": it.meta})
			var ident Identifier
			if err := s.seedRequest(ctx, info.Key, coll, body, &ident); err != nil {
				return info, fmt.Errorf("admin: demo identifier %d: %w", i, err)
			}
			made = append(made, ident.Handle)
		}
		if b.test {
			info.TestHandles = made
		} else {
			info.Handles = made
			h, err := s.seedLoc(ctx, info, coll)
			if err != nil {
				return info, fmt.Errorf("admin: demo identifier with locations: %w", err)
			}
			info.LocHandle = h
		}
	}
	s.log.Info("demo data loaded", "snaa", info.SNAAID, "namespace", info.Namespace, "identifiers", len(info.Handles)+len(info.TestHandles))
	return info, nil
}

// seedLoc creates the demo identifier DemoLocID in the collection coll
// through the API, then adds the DemoLoc value to its record. The admin API
// writes only the model's values, so the second step is the one write of the
// demo that is not an API request: it is what `pidnode import` of a record
// with a 10320/loc value does (no audit entry; the create has one).
func (s *Server) seedLoc(ctx context.Context, info DemoInfo, coll string) (string, error) {
	const site = "https://repository.demo-catalysis.example.org"
	it := demoMeta("REGISTERED", "Ni/SiO2 hydrogenation catalyst, batch 2025-031 (mirrored)",
		"Impregnated Ni/SiO2; its landing page is mirrored in Europe and the United States, and its metadata is Turtle.",
		"SAMPLE", map[string]any{"variant_url": site + "/samples/ni-sio2-2025-031.ttl", "media_type": "text/turtle", "encoding_format": "UTF-8"})
	body, _ := json.Marshal(map[string]any{"url": site + "/samples/ni-sio2-2025-031", "metadata": it})
	var ident Identifier
	if err := s.seedDo(ctx, "PUT", info.Key, coll+DemoLocID, body, &ident, "If-None-Match", "*"); err != nil {
		return "", err
	}
	key, _, err := s.namer.AppendKey(nil, []byte(ident.Handle))
	if err != nil {
		return "", err
	}
	now := s.now()
	err = s.w.CommitAs(info.SNAAID, 1, func(tx registry.Tx) error {
		st, ok, err := tx.Record(string(key))
		if err != nil || !ok {
			return fmt.Errorf("reading %s back: found %v, %w", ident.Handle, ok, err)
		}
		old := st
		vals := make([]handlev.Value, 0, len(st.Record.Values)+1)
		vals = append(vals, st.Record.Values...)
		vals = append(vals, handlev.Value{Index: demoLocIndex, Type: handlev.TypeLoc, Data: []byte(DemoLoc),
			TTLType: handlev.TTLRelative, TTL: 86400, Timestamp: now.Unix(), Perm: handlev.PermDefault})
		sort.SliceStable(vals, func(i, j int) bool { return vals[i].Index < vals[j].Index })
		st.Record.Values = vals
		st.Version++
		st.Updated = now
		if err := tx.PutRecord(string(key), &st); err != nil {
			return err
		}
		return tx.IndexRecord(string(key), &old, &st)
	})
	if err != nil {
		return "", err
	}
	if s.inv != nil {
		s.inv.Invalidate(string(key))
	}
	return ident.Handle, nil
}

// seedRequest runs one create through the API's own handler.
func (s *Server) seedRequest(ctx context.Context, key, path string, body []byte, out any) error {
	return s.seedDo(ctx, "POST", key, path, body, out)
}

// seedDo runs one request through the API's own handler and wants 201; hdr
// holds header pairs.
func (s *Server) seedDo(ctx context.Context, method, key, path string, body []byte, out any, hdr ...string) error {
	req, err := http.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	rec := &recorder{h: http.Header{}, code: http.StatusOK}
	s.mux.ServeHTTP(rec, req)
	if rec.code != http.StatusCreated {
		return fmt.Errorf("status %d: %s", rec.code, rec.body.Bytes())
	}
	return json.Unmarshal(rec.body.Bytes(), out)
}

// recorder is a minimal in-process http.ResponseWriter.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

type demoItem struct {
	url       string
	meta      map[string]any
	obsoletes bool
}

func demoMeta(status, label, desc, category string, variants ...map[string]any) map[string]any {
	vs := make([]any, len(variants))
	for i, v := range variants {
		vs[i] = v
	}
	return map[string]any{
		"status": status, "schema_version": "v1.0.1", "metadata_license": "CC0-1.0",
		"curation_contact": "pids@demo-catalysis.example.org",
		"resource_info": map[string]any{"label": label, "description": desc,
			"resource_category": category, "representation_variants": vs},
	}
}

func demoItems() []demoItem {
	const site = "https://repository.demo-catalysis.example.org"
	v := func(path, mt, enc string, size int) map[string]any {
		m := map[string]any{"variant_url": site + path, "media_type": mt}
		if enc != "" {
			m["encoding_format"] = enc
		}
		if size > 0 {
			m["size"] = size
		}
		return m
	}
	return []demoItem{
		{url: site + "/samples/cu-zno-al2o3-2025-017",
			meta: demoMeta("REGISTERED", "Cu/ZnO/Al2O3 methanol synthesis catalyst, batch 2025-017",
				"Co-precipitated Cu/ZnO/Al2O3 catalyst, calcined at 350 °C; reference material for the methanol synthesis round robin.",
				"SAMPLE", v("/samples/cu-zno-al2o3-2025-017.ttl", "text/turtle", "UTF-8", 4711), v("/samples/cu-zno-al2o3-2025-017.json", "application/ld+json", "UTF-8", 5230))},
		{url: site + "/data/xrd-2025-017",
			meta: demoMeta("REGISTERED", "XRD patterns of batch 2025-017 before and after reduction",
				"Powder X-ray diffraction, Cu Kα, 10–90° 2θ; raw and background-corrected patterns.",
				"DATA_OBJECT", v("/data/xrd-2025-017.zip", "application/zip", "", 18342112))},
		{url: site + "/devices/flow-reactor-3",
			meta: demoMeta("REGISTERED", "Fixed-bed flow reactor FR-3",
				"Stainless-steel fixed-bed reactor up to 80 bar and 400 °C with online GC.",
				"DEVICE", v("/devices/flow-reactor-3.ttl", "text/turtle", "UTF-8", 2210))},
		{url: site + "/samples/pt-al2o3-2026-002",
			meta: demoMeta("SUBMITTED", "Pt/Al2O3 reforming catalyst, batch 2026-002 (in preparation)",
				"Reserved identifier: characterisation data will follow.",
				"SAMPLE", v("/samples/pt-al2o3-2026-002.ttl", "text/turtle", "UTF-8", 0))},
		{url: site + "/samples/cu-zno-al2o3-2024-101",
			meta: demoMeta("OBSOLETED", "Cu/ZnO/Al2O3 catalyst, batch 2024-101 (superseded)",
				"Superseded by batch 2025-017 after a calcination error was found.",
				"SAMPLE", v("/samples/cu-zno-al2o3-2024-101.ttl", "text/turtle", "UTF-8", 4102)),
			obsoletes: true},
	}
}
