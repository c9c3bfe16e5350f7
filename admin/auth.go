package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"pidnode/access"
	"pidnode/registry"
	"pidnode/write"
)

// KeyPrefix starts every SNAA API key; KeyRandomBytes of randomness follow
// (package access owns the format).
const (
	KeyPrefix      = access.KeyPrefix
	KeyRandomBytes = access.KeyRandomBytes
)

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, *Problem) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", problem(http.StatusUnauthorized, "send your API key as Authorization: Bearer <key>").
			with("WWW-Authenticate", `Bearer realm="pidnode"`)
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", problem(http.StatusUnauthorized, "the Authorization header must be \"Bearer <key>\"").
			with("WWW-Authenticate", `Bearer realm="pidnode", error="invalid_request"`)
	}
	return strings.TrimSpace(tok), nil
}

func invalidToken(detail string) *Problem {
	return problem(http.StatusUnauthorized, "%s", detail).
		with("WWW-Authenticate", `Bearer realm="pidnode", error="invalid_token"`)
}

// op wraps an operator route: only the operator key passes.
func (g *gate) op(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if sess, err := g.session(r, true); err != nil {
			return err
		} else if sess != nil {
			return h(w, r.WithContext(context.WithValue(r.Context(), authKey, &principal{person: sess.Person})))
		}
		tok, p := bearer(r)
		if p != nil {
			return p
		}
		if g.keys.IsOperator(tok) {
			return h(w, r)
		}
		if access.WellFormed(tok) {
			if _, _, err := g.keys.Lookup(tok); err == nil {
				return problem(http.StatusForbidden, "operator routes need the operator key; this is an SNAA key")
			} else if !errors.Is(err, access.ErrUnknownKey) && !errors.Is(err, access.ErrRevokedKey) {
				return err
			}
		}
		return invalidToken("the key is not the operator key")
	}
}

type ctxKey int

const authKey ctxKey = 0

// principal is the authenticated SNAA of a request: a key, or a person's session.
type principal struct {
	snaa   SNAA
	key    Key
	person *registry.PersonView
}

func (p *principal) actor() string { return p.writer().Name() }

// writer is p as the write service's Actor.
func (p *principal) writer() *write.Actor {
	return &write.Actor{SNAA: p.snaa, Key: p.key, Person: p.person}
}

func principalOf(r *http.Request) *principal {
	p, _ := r.Context().Value(authKey).(*principal)
	return p
}

// snaa wraps an SNAA route: a valid, unrevoked key of a SNAA that is not suspended.
func (g *gate) snaa(b *base, h func(w http.ResponseWriter, r *http.Request, b *base) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ns := strings.ToUpper(strings.ReplaceAll(r.PathValue("ns"), "-", ""))
		if sess, err := g.session(r, false); err != nil {
			return err
		} else if sess != nil {
			// A person's session reads and writes as a key does: on a
			// cluster node, after the namespace's shard is caught up.
			if err := g.syncBeforeAuth(r, ns); err != nil {
				return err
			}
			ctx, err := g.admit(r, sess.Key, sess.SNAA, sess.Person)
			if err != nil {
				return err
			}
			return h(w, r.WithContext(ctx), b)
		}
		tok, p := bearer(r)
		if p != nil {
			return p
		}
		if g.keys.IsOperator(tok) {
			return problem(http.StatusForbidden, "the operator key cannot write identifiers; use an SNAA's key")
		}
		if !access.WellFormed(tok) {
			return invalidToken(fmt.Sprintf("malformed key: an API key is %q followed by %d base32 characters", KeyPrefix, access.KeySecretLen-len(KeyPrefix)))
		}
		if err := g.syncBeforeAuth(r, ns); err != nil {
			return err
		}
		k, sn, err := g.keys.Lookup(tok)
		if err != nil {
			return err
		}
		ctx, err := g.admit(r, k, sn, nil)
		if err != nil {
			return err
		}
		return h(w, r.WithContext(ctx), b)
	}
}

// admit is what an SNAA request passes once its key is found (by bearer
// key, or by a console session's key hash): the SNAA is not suspended, the
// key's use is noted, the rate limit charged, writes are possible. It
// returns the request's context with the principal.
func (g *gate) admit(r *http.Request, k Key, sn SNAA, person *registry.PersonView) (context.Context, error) {
	if err := g.adm.Admit(k, sn, r.Method != http.MethodGet && r.Method != http.MethodHead, isBulk(r)); err != nil {
		return nil, err
	}
	return context.WithValue(r.Context(), authKey, &principal{snaa: sn, key: k, person: person}), nil
}

// Writer commits the API's writes (write.Writer): the database's own
// registry on a single node, a cluster node's etcd transactions otherwise.
type Writer = write.Writer

// syncBeforeAuth runs Config.SyncAuth before a key is looked up, for the
// namespace the path names (as checkTarget compares it; "" for none). A
// request that cannot be synced answers 503: its write could not be made
// either, and a read could be stale, which the admin API never is (the
// resolver fronts are where reads go on whatever etcd does).
func (g *gate) syncBeforeAuth(r *http.Request, namespace string) error {
	if g.syncAuth == nil {
		return nil
	}
	return g.syncAuth(r.Context(), namespace)
}

// AuthChanged drops the cached keys and SNAAs, for a writer that changes
// them without going through this Server (a cluster node applying another
// node's revocation), and makes the open event streams look their keys up
// again, so that a revoked key's or a suspended SNAA's streams end. Call it
// after the change has committed. Safe for concurrent use.
func (s *Server) AuthChanged() { s.keys.Invalidate() }
