package admin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"pidnode/model"
	"pidnode/registry"
)

// op documents one route in /openapi.json.
type op struct {
	summary string
	auth    string // "", "operator", "snaa"
	request string // component schema name of the JSON body
	// jsonLines: the body may also be JSON Lines (jsonLinesTypes), one item
	// of the request schema (an array) per line, or the bulk CSV.
	jsonLines bool
	ok        int    // success status
	okSchema  string // component schema of the success body ("" = none)
	errs      []int  // further error statuses
	query     []param
	headers   []param
	okHeads   []string // response headers on success: "Location", "ETag"
	tag       string
	// alt are the success body's other media types (Accept), each
	// documented as text: name the type, desc the text's form.
	alt []param
	// export: the columns of the success body as an export (CSV, JSON Lines).
	export string
}

type param struct{ name, desc string }

var pathParamRE = regexp.MustCompile(`\{([a-z_]+)\}`)

var paramDocs = map[string]string{
	"id": "application, SNAA or identifier id (an identifier id may hold '/')", "key_id": "key id",
	"prefix": "the base's prefix", "ns": "the caller's namespace", "webhook_id": "webhook endpoint id",
}

func (s *Server) buildOpenAPI() ([]byte, error) {
	paths := map[string]map[string]any{}
	used := map[int]bool{} // the problem statuses the operations name
	for _, rt := range s.routes {
		method, path, o := rt.Method, rt.Pattern, rt.doc
		item := paths[path]
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		var params []any
		for _, m := range pathParamRE.FindAllStringSubmatch(path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": paramDocs[m[1]], "schema": map[string]any{"type": "string"}})
		}
		for _, q := range o.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.desc, "schema": map[string]any{"type": "string"}})
		}
		for _, h := range o.headers {
			params = append(params, map[string]any{"name": h.name, "in": "header", "description": h.desc, "schema": map[string]any{"type": "string"}})
		}
		resps := map[string]any{}
		okr := map[string]any{"description": "success"}
		if o.okSchema != "" {
			content := map[string]any{"application/json": map[string]any{"schema": ref(o.okSchema)}}
			for _, a := range o.alt {
				content[a.name] = map[string]any{"schema": map[string]any{"type": "string", "description": a.desc}}
			}
			if o.export != "" {
				content["text/csv"] = map[string]any{"schema": map[string]any{"type": "string", "description": "RFC 4180 CSV with a header row, one identifier per row: " + o.export}}
				content["application/x-ndjson"] = map[string]any{"schema": map[string]any{"type": "string", "description": "JSON Lines, one object per identifier: " + o.export}}
			}
			okr["content"] = content
		} else if path == "/openapi.json" {
			okr["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}
		} else if path == "/ops/v1/backup" {
			okr["content"] = map[string]any{"application/octet-stream": map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/octet-stream"}}}
		} else if path == "/healthz" || path == "/readyz" {
			okr["content"] = map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
		}
		if len(o.okHeads) > 0 {
			hs := map[string]any{}
			for _, h := range o.okHeads {
				hs[h] = map[string]any{"schema": map[string]any{"type": "string"}, "description": headerDocs[h]}
			}
			okr["headers"] = hs
		}
		resps[fmt.Sprint(o.ok)] = okr
		errs := append([]int{}, o.errs...)
		// Every route sits behind Config.RefuseKeys's guard: a request that
		// carries a key to a plain-HTTP network listener is refused with 403,
		// whatever the route.
		errs = append(errs, 403)
		if o.auth != "" && o.auth != "statusToken" {
			errs = append(errs, 401, 403)
		}
		if o.auth == "snaa" {
			errs = append(errs, 429)
			if method != "GET" {
				errs = append(errs, 503, 507)
			}
		}
		if o.request != "" {
			errs = append(errs, 400, 413, 415, 422)
		}
		if strings.Contains(path, "{") || o.auth == "snaa" {
			errs = append(errs, 404)
		}
		if method == "GET" && (o.query != nil || o.auth != "") {
			errs = append(errs, 400)
		}
		if o.ok == 200 && method == "GET" && strings.HasSuffix(path, "{id}") && o.auth == "snaa" {
			resps["304"] = map[string]any{"description": "not modified (If-None-Match)"}
		}
		for _, st := range errs {
			resps[fmt.Sprint(st)] = map[string]any{"$ref": fmt.Sprintf("#/components/responses/Problem%d", st)}
			used[st] = true
		}
		opn := map[string]any{
			"summary":     o.summary,
			"operationId": operationID(method, path),
			"tags":        []string{o.tag},
			"responses":   resps,
		}
		if len(params) > 0 {
			opn["parameters"] = params
		}
		switch o.auth {
		case "operator":
			opn["security"] = []any{map[string]any{"operatorKey": []string{}}}
		case "snaa":
			opn["security"] = []any{map[string]any{"snaaKey": []string{}}}
		case "statusToken":
			opn["security"] = []any{map[string]any{"statusToken": []string{}}}
		default:
			opn["security"] = []any{}
		}
		if o.request != "" {
			content := map[string]any{"application/json": map[string]any{"schema": ref(o.request)}}
			if o.jsonLines {
				// OpenAPI 3.1 cannot give a schema per line: the body is text
				// whose lines are each one item of the array schema.
				for _, mt := range jsonLinesTypes {
					content[mt] = map[string]any{"schema": map[string]any{"type": "string",
						"description": "JSON Lines: one item of " + o.request + " per line (at most " + strconv.Itoa(MaxBulkItems) + "); empty lines are skipped"}}
				}
				content["text/csv"] = map[string]any{"schema": map[string]any{"type": "string", "description": "RFC 4180 CSV: a header row naming the columns, then one item per row (at most " + strconv.Itoa(MaxBulkItems) + "). Columns: " + strings.Join(s.model.BulkColumns(), ", ") + "; op (create or update) is required, an empty cell sets nothing, a field stored as JSON and an object's property that is not a string are JSON text"}}
			}
			opn["requestBody"] = map[string]any{"required": true, "content": content}
		}
		item[strings.ToLower(method)] = opn
	}
	responses := map[string]any{}
	for st, title := range problemTitles {
		if !used[st] {
			continue
		}
		r := map[string]any{"description": title,
			"content": map[string]any{"application/problem+json": map[string]any{"schema": ref("Problem")}}}
		switch st {
		case 401:
			r["headers"] = map[string]any{"WWW-Authenticate": map[string]any{"schema": map[string]any{"type": "string"}, "description": "Bearer realm=\"pidnode\"[, error=\"invalid_token\"]"}}
		case 405:
			r["headers"] = map[string]any{"Allow": map[string]any{"schema": map[string]any{"type": "string"}}}
		case 429:
			r["headers"] = map[string]any{"Retry-After": map[string]any{"schema": map[string]any{"type": "integer"}}}
		}
		responses[fmt.Sprintf("Problem%d", st)] = r
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "pidnode admin API",
			"version":     "2.0.0",
			"description": "SNAA onboarding (operator routes /ops/v1) and identifier writes (/pid/v2 production prefix, /testpid/v2 test prefix). Errors are RFC 9457 problem+json. Metadata model: " + s.model.Name + " " + s.model.Version + ".",
		},
		// The document is served by the admin listener it describes, at
		// /openapi.json: its server is that listener, whatever its address.
		"servers": []any{map[string]any{"url": "/", "description": "the admin listener that serves this document"}},
		"paths":   paths,
		"tags": []any{
			map[string]any{"name": "operator", "description": "operator key"},
			map[string]any{"name": "snaa", "description": "an SNAA's key; its own namespace only"},
			map[string]any{"name": "apply", "description": "no key: the public application route"},
			map[string]any{"name": "meta", "description": "no key"},
		},
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"operatorKey": map[string]any{"type": "http", "scheme": "bearer", "description": "the operator key (--operator-key-file)"},
				"snaaKey":     map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "pid_<52 base32 characters>", "description": "an SNAA API key"},
				"statusToken": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "ast_<52 base32 characters>", "description": "an application's status token (POST /apply/v1/applications)"},
			},
			"responses": responses,
			"schemas":   webhookSchemas(s.schemas()),
		},
	}
	return marshal(doc)
}

var headerDocs = map[string]string{
	"Location": "admin URL of the created identifier",
	"ETag":     "the record version, quoted",
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(path, "/") {
		seg = strings.Trim(seg, "{}")
		seg = strings.NewReplacer(".", "", "_", "").Replace(seg)
		if seg == "" {
			continue
		}
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	if strings.HasSuffix(path, "/") {
		b.WriteString("Collection")
	}
	return b.String()
}

func str() map[string]any { return map[string]any{"type": "string"} }
func dt() map[string]any  { return map[string]any{"type": "string", "format": "date-time"} }
func obj(req []string, props map[string]any) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(req) > 0 {
		o["required"] = req
	}
	return o
}
func arr(items any) map[string]any { return map[string]any{"type": "array", "items": items} }

// schemas are the component schemas; the metadata ones come from the model.
func (s *Server) schemas() map[string]any {
	feedActions := []string{ActHandleCreate, ActHandleUpdate, registry.ActLinkBroken, registry.ActLinkRecovered}
	linkState := map[string]any{"enum": []string{registry.LinkOK, registry.LinkFailing, registry.LinkBroken, registry.LinkRecovering}}
	contact := obj([]string{"name", "email"}, map[string]any{"name": str(), "email": map[string]any{"type": "string", "format": "email"}})
	fieldErr := obj([]string{"field", "message"}, map[string]any{"field": str(), "message": str()})
	app := obj([]string{"id", "organisation", "technical_contact", "administrative_contact", "policy_version", "maintenance_statement", "state", "submitted"},
		map[string]any{
			"id": str(), "organisation": str(), "technical_contact": ref("Contact"), "administrative_contact": ref("Contact"),
			"policy_version": str(), "maintenance_statement": str(),
			"state":     map[string]any{"type": "string", "enum": []string{StateSubmitted, StateApproved, StateRejected}},
			"submitted": dt(), "decided": dt(), "note": str(), "snaa_id": str(),
			"prefixes": arr(str()), "custom_ids": map[string]any{"type": "boolean"},
			"status_token_sha256": map[string]any{"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "SHA-256 of the status token of an application made through /apply"},
		})
	snaa := obj([]string{"id", "organisation", "namespace", "prefixes", "custom_ids", "suspended", "created", "updated"},
		map[string]any{
			"id": str(), "organisation": str(), "namespace": str(), "prefixes": arr(str()),
			"custom_ids": map[string]any{"type": "boolean"}, "suspended": map[string]any{"type": "boolean"},
			"application_id": str(), "technical_contact": ref("Contact"), "created": dt(), "updated": dt(),
			"max_keys": map[string]any{"type": "integer", "minimum": 1, "description": "unrevoked keys the SNAA may hold; absent: the node's default"},
			"shard":    map[string]any{"type": "string", "description": "the etcd shard holding the namespace's records (a cluster of several etcd clusters)"},
		})
	snaaPatch := obj(nil, map[string]any{"custom_ids": map[string]any{"type": "boolean"}, "prefixes": arr(str()), "suspended": map[string]any{"type": "boolean"},
		"max_keys": map[string]any{"type": "integer", "minimum": 0, "maximum": MaxKeysPerSNAA, "description": "unrevoked keys the SNAA may hold; 0: the node's default"}})
	key := obj([]string{"id", "snaa_id", "name", "created"}, map[string]any{
		"id": str(), "snaa_id": str(), "name": str(), "created": dt(), "last_used": dt(), "revoked": dt()})
	issued := obj([]string{"id", "name", "snaa_id", "secret", "created"}, map[string]any{
		"id": str(), "name": str(), "snaa_id": str(), "created": dt(),
		"secret": map[string]any{"type": "string", "pattern": "^pid_[a-z2-7]{52}$", "description": "shown only once"}})
	metaProps := map[string]any{}
	var metaReq []string
	for _, f := range s.model.Fields {
		js := schemaJSON(f.Schema)
		metaProps[f.Name] = js
		if f.Required {
			metaReq = append(metaReq, f.Name)
		}
	}
	httpURL := map[string]any{"type": "string", "format": "uri", "maxLength": model.MaxURLBytes, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$",
		"description": "absolute http or https URL, no control characters"}
	// Update bodies may send null to remove an optional field.
	updProps := map[string]any{}
	for _, f := range s.model.Fields {
		js := schemaJSON(f.Schema)
		if !f.Required {
			js = map[string]any{"anyOf": []any{js, map[string]any{"type": "null"}}}
		}
		updProps[f.Name] = js
	}
	ident := obj([]string{"handle", "prefix", "namespace", "id", "url", "metadata", "version", "created", "updated", "links"},
		map[string]any{
			"handle": str(), "prefix": str(), "namespace": str(), "id": str(), "url": str(),
			"metadata": ref("Metadata"), "version": map[string]any{"type": "integer", "minimum": 1},
			"created": dt(), "updated": dt(),
			"links": obj([]string{"resolve", "api", "noredirect"}, map[string]any{"resolve": str(), "api": str(), "noredirect": str()}),
		})
	change := obj([]string{"datetime_log", "has_agent", "changed_field", "description"}, map[string]any{
		"datetime_log": str(), "changed_field": str(), "description": str(),
		"has_agent": map[string]any{"type": "object", "properties": map[string]any{
			"name": str(), "email_address": str(), "orcid": str(), "affiliation_ror": str(),
			"role": map[string]any{"type": "string", "enum": []string{"TRUSTEE", "OWNER"}}}},
	})
	return map[string]any{
		"Problem": map[string]any{"type": "object", "required": []string{"type", "title", "status"},
			"description": "RFC 9457 problem details",
			"properties": map[string]any{"type": str(), "title": str(), "status": map[string]any{"type": "integer"},
				"detail": str(), "errors": arr(ref("FieldError"))}},
		"FieldError": fieldErr,
		"Contact":    contact,
		"ApplicationRequest": obj([]string{"organisation", "technical_contact", "administrative_contact", "policy_version", "maintenance_statement"}, map[string]any{"organisation": str(), "technical_contact": ref("Contact"), "administrative_contact": ref("Contact"), "policy_version": str(), "maintenance_statement": str(),
			"prefixes": map[string]any{"type": "array", "items": str(), "description": "prefixes asked for; none: every prefix the node serves"}, "custom_ids": map[string]any{"type": "boolean", "description": "asks to choose custom ids"}}),
		"ApplicationReceipt": obj([]string{"id", "state", "status_token", "status_url"}, map[string]any{"id": str(), "state": str(),
			"status_token": map[string]any{"type": "string", "description": "shown only once; the bearer token of status_url"}, "status_url": str()}),
		"ApplicationStatus": obj([]string{"id", "state", "submitted"}, map[string]any{"id": str(),
			"state":     map[string]any{"type": "string", "enum": []string{StateSubmitted, StateApproved, StateRejected}},
			"submitted": dt(), "decided": dt(), "reason": str(), "contact": str(), "namespace": str(), "prefixes": arr(str())}),
		"Application":     app,
		"ApplicationList": obj([]string{"applications"}, map[string]any{"applications": arr(ref("Application"))}),
		"ApproveRequest": obj(nil, map[string]any{"namespace": map[string]any{"type": "string", "pattern": "^[0-9A-Za-z]{1,16}$"},
			"prefixes": arr(str()), "custom_ids": map[string]any{"type": "boolean"}, "note": str(), "shard": str()}),
		"ApproveResult": obj([]string{"application", "snaa", "key"}, map[string]any{"application": ref("Application"), "snaa": ref("SNAA"), "key": ref("IssuedKey")}),
		"RejectRequest": obj([]string{"note"}, map[string]any{"note": str()}),
		"SNAA":          snaa,
		"SNAAList":      obj([]string{"snaas"}, map[string]any{"snaas": arr(ref("SNAA"))}),
		"SNAAPatch":     snaaPatch,
		"KeyRequest":    obj([]string{"name"}, map[string]any{"name": str()}),
		"Key":           key,
		"KeyList":       obj([]string{"keys"}, map[string]any{"keys": arr(ref("Key"))}),
		"IssuedKey":     issued,
		"AuditEntry": obj([]string{"seq", "time", "actor", "action", "target"}, map[string]any{
			"seq": map[string]any{"type": "integer"}, "time": dt(), "actor": str(), "key_name": str(), "person": str(), "action": str(), "target": str(),
			"before": map[string]any{}, "after": map[string]any{}}),
		"AuditList":      obj([]string{"entries"}, map[string]any{"entries": arr(ref("AuditEntry")), "next": str()}),
		"Metadata":       obj(metaReq, metaProps),
		"HandleCreate":   obj([]string{"url", "metadata"}, map[string]any{"url": httpURL, "metadata": ref("Metadata")}),
		"HandleUpdate":   obj(nil, map[string]any{"url": httpURL, "metadata": obj(nil, updProps)}),
		"Identifier":     ident,
		"IdentifierList": obj([]string{"items"}, map[string]any{"items": arr(ref("Identifier")), "next_cursor": str(), "total": map[string]any{"type": "integer", "description": "search pages: the identifiers that match in all"}, "page": map[string]any{"type": "integer"}, "page_size": map[string]any{"type": "integer"}, "pages": map[string]any{"type": "integer"}}),
		"History": obj([]string{"handle", "version", "changes", "change_log"}, map[string]any{"handle": str(),
			"version": map[string]any{"type": "integer"}, "changes": arr(ref("HistoryEntry")), "change_log": arr(ref("ChangeEntry"))}),
		"HistoryEntry": obj([]string{"seq", "time", "action"}, map[string]any{"seq": map[string]any{"type": "integer"}, "time": dt(),
			"action": map[string]any{"enum": feedActions}, "key_id": str(), "key_name": str(), "person": str(),
			"before": map[string]any{}, "after": map[string]any{}}),
		"ChangeEntry": change,
		"EventState": obj(nil, map[string]any{"url": str(), "status": str(), "linkcheck": obj([]string{"state"}, map[string]any{
			"state": linkState, "kind": str(), "status": map[string]any{"type": "integer"}, "error": str(), "final_url": str(),
			"checked": dt(), "failures": map[string]any{"type": "integer"}, "first_failure": dt()})}),
		"LinkResult": obj([]string{"handle", "url", "kind", "state", "checked", "since", "failures"}, map[string]any{
			"handle": str(), "url": str(), "kind": map[string]any{"enum": []string{"target", "variant"}}, "state": linkState,
			"status":    map[string]any{"type": "integer", "description": "final HTTP status after redirects; absent if no response came"},
			"final_url": str(), "error": map[string]any{"enum": []string{"http", "dns", "connect", "tls", "timeout", "denied", "redirects", "scheme", "other"}},
			"checked": dt(), "duration_ms": map[string]any{"type": "integer"}, "since": dt(), "first_failure": dt(),
			"failures": map[string]any{"type": "integer", "description": "consecutive failed checks"}, "due": dt()}),
		"LinkcheckPage":   obj([]string{"targets"}, map[string]any{"targets": arr(ref("LinkResult")), "next_cursor": str()}),
		"LinkcheckRecord": obj([]string{"handle", "results"}, map[string]any{"handle": str(), "results": arr(ref("LinkResult"))}),
		"Event": obj([]string{"seq", "time", "action", "handle"}, map[string]any{"seq": map[string]any{"type": "integer", "minimum": 1}, "time": dt(),
			"action": map[string]any{"enum": feedActions}, "handle": str(), "key_id": str(), "key_name": str(), "person": str(),
			"before": ref("EventState"), "after": ref("EventState")}),
		"EventPage": obj([]string{"events", "next_after"}, map[string]any{"events": arr(ref("Event")),
			"next_after": map[string]any{"type": "integer", "minimum": 0, "description": "the after of the next page: the last event's seq, or this request's after when there was none"}}),
		"Stats": obj([]string{"namespace", "prefix", "from", "to", "total", "days"}, map[string]any{"handle": str(), "namespace": str(), "prefix": str(),
			"from": map[string]any{"type": "string", "format": "date"}, "to": map[string]any{"type": "string", "format": "date"},
			"total": map[string]any{"type": "integer"}, "days": arr(obj([]string{"date", "count"}, map[string]any{
				"date": map[string]any{"type": "string", "format": "date"}, "count": map[string]any{"type": "integer"}})),
			"retained_from": map[string]any{"type": "string", "format": "date", "description": "an identifier's statistics: the first day whose counts this node keeps (--stats-retention); absent when kept forever"}}),
		"BulkRequest": map[string]any{"type": "array", "minItems": 1, "maxItems": MaxBulkItems, "items": obj(nil, map[string]any{
			"op": map[string]any{"enum": []string{model.OpCreate, model.OpUpdate}, "description": "create: a new identifier (a taken id fails the item); update: an existing one (an unknown id fails the item); absent: an existing id updates, an unknown one creates"},
			"id": map[string]any{"type": "string", "minLength": 1}, "url": httpURL, "metadata": obj(nil, updProps)})},
		"BulkResponse": obj([]string{"items"}, map[string]any{"items": arr(obj([]string{"status"}, map[string]any{
			"status": map[string]any{"type": "integer"}, "handle": str(), "type": str(), "title": str(), "detail": str(), "errors": arr(ref("FieldError"))})), "created": map[string]any{"type": "integer"}, "updated": map[string]any{"type": "integer"}, "failed": map[string]any{"type": "integer"}}),
		"WhoAmI": obj([]string{"snaa", "key", "base", "prefix", "may_write", "collection"}, map[string]any{
			"snaa": ref("SNAA"), "key": obj([]string{"id", "name"}, map[string]any{"id": str(), "name": str()}),
			"base": str(), "prefix": str(), "may_write": map[string]any{"type": "boolean"}, "collection": str()}),
	}
}

// schemaJSON converts a model schema to JSON Schema 2020-12; a discriminator
// becomes allOf if/then clauses.
func schemaJSON(s *model.Schema) map[string]any {
	m := map[string]any{"type": s.Type}
	if s.Description != "" {
		m["description"] = s.Description
	}
	if s.Example != "" { // the model writes every example as text; a number's is a number
		m["examples"] = []any{s.Example}
		if (s.Type == "integer" || s.Type == "number") && json.Valid([]byte(s.Example)) {
			m["examples"] = []any{json.Number(s.Example)}
		}
	}
	if s.Default != nil {
		m["default"] = *s.Default
	}
	if len(s.Enum) > 0 {
		m["enum"] = s.Enum
	}
	if s.Const != nil {
		m["const"] = *s.Const
	}
	switch s.Format {
	case "http-url":
		m["format"] = "uri"
		m["pattern"] = "^[Hh][Tt][Tt][Pp][Ss]?://"
	case "":
	default:
		m["format"] = s.Format
	}
	if s.Pattern != "" {
		if _, ok := m["pattern"]; ok {
			m["allOf"] = []any{map[string]any{"pattern": s.Pattern}}
		} else {
			m["pattern"] = s.Pattern
		}
	}
	setInt := func(k string, p *int) {
		if p != nil {
			m[k] = *p
		}
	}
	setInt("minLength", s.MinLength)
	setInt("maxLength", s.MaxLength)
	setInt("minItems", s.MinItems)
	setInt("maxItems", s.MaxItems)
	if s.Minimum != nil {
		m["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		m["maximum"] = *s.Maximum
	}
	if s.Items != nil {
		m["items"] = schemaJSON(s.Items)
	}
	if s.Type == "object" {
		props := map[string]any{}
		for _, k := range s.Properties.Names {
			props[k] = schemaJSON(s.Properties.Map[k])
		}
		m["properties"] = props
		if len(s.Required) > 0 {
			m["required"] = s.Required
		}
		m["additionalProperties"] = s.AdditionalProperties != nil && *s.AdditionalProperties
	}
	if d := s.Discriminator; d != nil {
		var cases []string
		for k := range d.Cases {
			cases = append(cases, k)
		}
		sort.Strings(cases)
		var all []any
		if a, ok := m["allOf"].([]any); ok {
			all = a
		}
		for _, k := range cases {
			c := d.Cases[k]
			then := map[string]any{}
			props := map[string]any{}
			for _, n := range c.Properties.Names {
				props[n] = schemaJSON(c.Properties.Map[n])
			}
			then["properties"] = props
			if len(c.Required) > 0 {
				then["required"] = c.Required
			}
			all = append(all, map[string]any{
				"if":   map[string]any{"properties": map[string]any{d.Property: map[string]any{"const": k}}, "required": []string{d.Property}},
				"then": then,
			})
		}
		m["allOf"] = all
	}
	return m
}
