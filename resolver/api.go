package resolver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"pidnode/handlev"
	"pidnode/internal/ascii"
	"pidnode/internal/unsafeconv"
)

const apiHandlesPath = "/api/handles"

// serveAPI is the Handle JSON API (docs/handle-protocol.md §1): /api/handles/{handle}
// for GET, HEAD and POST (parameters in the body), CORS preflight for OPTIONS,
// RC 4 / 404 for any other /api/… path.
func (s *Server) serveAPI(ctx *fasthttp.RequestCtx, sc *scratch, path, query []byte) {
	h := &ctx.Response.Header
	h.SetCanonical(hdrACAO, valStar)
	isHandles := string(path) == apiHandlesPath || hasPrefixBytes(path, apiHandlesPath+"/")
	switch {
	case ctx.IsOptions():
		h.SetCanonical(hdrACAM, valAllowAPI)
		if rh := ctx.Request.Header.Peek("Access-Control-Request-Headers"); len(rh) > 0 && len(rh) <= 512 && headerList(rh) {
			h.SetCanonical(hdrACAH, rh)
		}
		h.SetCanonical(hdrACMA, valMaxAge)
		h.SetCanonical(hdrAllow, valAllowAPI)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	case !isHandles:
		sc.out = apiMessage(sc.out[:0], rcProtocolError, msgUnknownEndpoint+string(ctx.Method())+" "+string(path))
		s.sendJSON(ctx, sc, fasthttp.StatusNotFound, sc.out)
		return
	case !ctx.IsGet() && !ctx.IsHead() && !ctx.IsPost():
		h.SetCanonical(hdrAllow, valAllowAPI)
		sc.out = apiMessage(sc.out[:0], rcProtocolError, msgReadOnlyMethod)
		s.sendJSON(ctx, sc, fasthttp.StatusMethodNotAllowed, sc.out)
		return
	}

	// Parameters: the query, then for POST the body (a form, or a JSON object
	// whose properties become parameters). They are read before the handle is
	// checked: pretty and callback shape error replies too.
	var err error
	p := &sc.p
	var body []byte
	if ctx.IsPost() {
		body = ctx.PostBody()
	}
	sc.arena = growArena(sc.arena, len(query)+len(body))
	if len(query) > 0 {
		if sc.arena, err = parseQuery(p, query, sc.arena); err != nil {
			s.sendParamError(ctx, sc, err)
			return
		}
	}
	if len(body) > 0 {
		if isJSONBody(ctx.Request.Header.ContentType(), body) {
			if body, err = jsonToForm(body); err != nil {
				sc.out = apiMessage(sc.out[:0], rcProtocolError, "Invalid JSON body: "+err.Error())
				s.sendJSON(ctx, sc, rcStatus(rcProtocolError), sc.out)
				return
			}
			sc.arena = growArena(sc.arena, len(body))
		}
		if sc.arena, err = parseQuery(p, body, sc.arena); err != nil {
			s.sendParamError(ctx, sc, err)
			return
		}
	}

	raw := path[len(apiHandlesPath):]
	if len(raw) > 0 {
		raw = raw[1:]
	}
	sc.handle, err = handlev.DecodePath(sc.handle[:0], raw)
	if err != nil {
		msg := msgEmptyHandle
		if !errors.Is(err, handlev.ErrEmpty) {
			msg = "Invalid handle: " + handleProblem(err)
		}
		sc.out = apiMessage(sc.out[:0], rcInvalidHandle, msg)
		s.sendJSON(ctx, sc, rcStatus(rcInvalidHandle), sc.out)
		return
	}
	handle := unsafeconv.String(sc.handle)
	sc.key, _, err = s.namer.AppendKey(sc.key[:0], sc.handle)
	if err != nil {
		if errors.Is(err, handlev.ErrPrefixNotServed) {
			sc.out = append(sc.out[:0], `{"responseCode":301,"message":"`+msgPrefixNotHere+`","handle":`...)
			sc.out = handlev.AppendJSONString(sc.out, handle)
			sc.out = append(sc.out, '}')
			s.sendJSON(ctx, sc, rcStatus(rcServerNotResp), sc.out)
			return
		}
		sc.out = apiMessage(sc.out[:0], rcInvalidHandle, "Invalid handle: "+handleProblem(err))
		s.sendJSON(ctx, sc, rcStatus(rcInvalidHandle), sc.out)
		return
	}
	e, err := s.cache.Get(sc.key)
	if err != nil {
		s.log.Error("resolver: loading record", "key", string(sc.key), "err", err)
		sc.out = apiMessage(sc.out[:0], rcError, msgInternalError)
		s.sendJSON(ctx, sc, rcStatus(rcError), sc.out)
		return
	}
	// A SUBMITTED identifier is reserved, not yet public: to the public it does
	// not exist yet, on every front (the native protocol answers RC 100 and DNS
	// NXDOMAIN as well).
	if !e.Found || e.Public.Hidden() {
		sc.out = append(sc.out[:0], `{"responseCode":100,"handle":`...)
		sc.out = handlev.AppendJSONString(sc.out, handle)
		sc.out = append(sc.out, '}')
		s.sendJSON(ctx, sc, rcStatus(rcHandleNotFound), sc.out)
		return
	}
	v := viewOf(e)
	e.CountHit(s.counter) // resolution statistics (no allocation)
	if !p.filtered() && len(v.values) > 0 {
		if !p.pretty && !sc.callbackSet() {
			// The hot path: written straight into the response body buffer.
			s.startJSON(ctx, fasthttp.StatusOK)
			_, _ = ctx.Write(jsonSuccessHead)
			sc.out = handlev.AppendJSONString(sc.out[:0], handle)
			_, _ = ctx.Write(sc.out)
			_, _ = ctx.Write(jsonValuesKey)
			_, _ = ctx.Write(v.json())
			_, _ = ctx.Write(jsonClose)
			return
		}
		sc.out = append(sc.out[:0], jsonSuccessHead...)
		sc.out = handlev.AppendJSONString(sc.out, handle)
		sc.out = append(sc.out, jsonValuesKey...)
		sc.out = append(sc.out, v.json()...)
		sc.out = append(sc.out, jsonClose...)
		s.sendJSON(ctx, sc, fasthttp.StatusOK, sc.out)
		return
	}
	sc.out = append(sc.out[:0], jsonSuccessHead...)
	sc.out = handlev.AppendJSONString(sc.out, handle)
	sc.out = append(sc.out, `,"values":[`...)
	n := 0
	for i := range v.values {
		if !p.match(&v.values[i]) {
			continue
		}
		if n > 0 {
			sc.out = append(sc.out, ',')
		}
		sc.out = handlev.AppendValueJSON(sc.out, &v.values[i])
		n++
	}
	if n == 0 {
		// Nothing to show, whether a filter matched nothing or the record has
		// no value with public read (or none at all): RC 200 VALUES_NOT_FOUND
		// as the reference server and the native protocol answer, in the key
		// order of docs/handle-protocol.md §1.3.
		sc.out = append(sc.out[:0], `{"responseCode":200,"values":[],"handle":`...)
		sc.out = handlev.AppendJSONString(sc.out, handle)
		sc.out = append(sc.out, '}')
	} else {
		sc.out = append(sc.out, "]}"...)
	}
	s.sendJSON(ctx, sc, fasthttp.StatusOK, sc.out)
}

var (
	jsonSuccessHead = []byte(`{"responseCode":1,"handle":`)
	jsonValuesKey   = []byte(`,"values":`)
	jsonClose       = []byte(`}`)
	jsonpClose      = []byte(");")
)

// headerList reports whether b is a plain list of header names (token
// characters, commas, spaces), the only thing a preflight answer echoes.
func headerList(b []byte) bool {
	for _, c := range b {
		if !handlev.IsHostByte(c) && c != ',' && c != ' ' && !strings.ContainsRune("!#$%&'*+^`|~", rune(c)) {
			return false
		}
	}
	return true
}

func (sc *scratch) callbackSet() bool { return sc.p.hasCallback && len(sc.p.callback) > 0 }

// apiMessage writes {"responseCode":rc,"message":msg}.
func apiMessage(dst []byte, rc int, msg string) []byte {
	dst = append(dst, `{"responseCode":`...)
	dst = strconv.AppendInt(dst, int64(rc), 10)
	dst = append(dst, `,"message":`...)
	dst = handlev.AppendJSONString(dst, msg)
	return append(dst, '}')
}

func (s *Server) sendParamError(ctx *fasthttp.RequestCtx, sc *scratch, err error) {
	msg := "Invalid parameter"
	if pe, ok := err.(*ParamError); ok {
		msg = "Invalid " + pe.Name + ": " + pe.Value
	}
	sc.out = apiMessage(sc.out[:0], rcProtocolError, msg)
	s.sendJSON(ctx, sc, rcStatus(rcProtocolError), sc.out)
}

// startJSON sets status and the Content-Type of a plain JSON reply.
func (s *Server) startJSON(ctx *fasthttp.RequestCtx, status int) {
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	ctx.Response.ResetBody()
}

// sendJSON sends the compact JSON body (which may live in sc.out) with the
// request's ?pretty and ?callback applied: pretty re-indents it, callback
// wraps it as JSONP (application/javascript, `cb(` … `);`).
func (s *Server) sendJSON(ctx *fasthttp.RequestCtx, sc *scratch, status int, body []byte) {
	if sc.p.pretty {
		sc.out2 = handlev.AppendPrettyJSON(sc.out2[:0], body)
		body = sc.out2
	}
	if !sc.callbackSet() {
		s.startJSON(ctx, status)
		_, _ = ctx.Write(body)
		return
	}
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(ctJS)
	ctx.Response.Header.SetCanonical(hdrNosniff, valNosniff)
	ctx.Response.ResetBody()
	sc.tmp = appendCallbackName(sc.tmp[:0], sc.p.callback)
	sc.tmp = append(sc.tmp, '(')
	_, _ = ctx.Write(sc.tmp)
	_, _ = ctx.Write(body)
	_, _ = ctx.Write(jsonpClose)
}

// appendCallbackName writes the JSONP callback name with every character
// that is not [_$a-zA-Z0-9] (and a leading digit) replaced by '_'
// (docs/handle-protocol.md §1.1): "a-b.c" → "a_b_c". A multi-byte character (or an
// invalid byte) becomes one '_'.
func appendCallbackName(dst, cb []byte) []byte {
	first := true
	for i := 0; i < len(cb); {
		c := cb[i]
		size := 1
		if c >= utf8.RuneSelf {
			_, size = utf8.DecodeRune(cb[i:])
			c = '_'
		}
		switch {
		case c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9':
			if first {
				c = '_'
			}
		default:
			c = '_'
		}
		dst = append(dst, c)
		first = false
		i += size
	}
	return dst
}

// isJSONBody: Content-Type application/json (or +json), or no recognisable
// form type and a body that starts with '{'.
func isJSONBody(ctype, body []byte) bool {
	mt := ctype
	if i := bytes.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = bytes.TrimSpace(mt)
	switch {
	case ascii.EqualFold(mt, "application/json"), len(mt) > 5 && ascii.HasSuffixFold(mt, "+json"):
		return true
	case ascii.EqualFold(mt, "application/x-www-form-urlencoded"):
		return false
	}
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// jsonToForm turns a JSON object body into form encoding: each property a
// parameter; strings, numbers and booleans as text, null as an empty value,
// arrays of those as repeated parameters.
func jsonToForm(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	vals := url.Values{}
	for k, v := range m {
		items, isList := v.([]any)
		if !isList {
			items = []any{v}
		}
		for _, it := range items {
			switch x := it.(type) {
			case string:
				vals.Add(k, x)
			case json.Number:
				vals.Add(k, x.String())
			case bool:
				vals.Add(k, strconv.FormatBool(x))
			case nil:
				vals.Add(k, "")
			default:
				return nil, errors.New("property " + strconv.Quote(k) + " is not a string, number, boolean or list of them")
			}
		}
	}
	return []byte(vals.Encode()), nil
}
