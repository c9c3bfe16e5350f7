package deptest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "pidnode"

// allowed lists, for each package directory, the pidnode packages it may import
// and the third-party modules it may use. "std" means the standard library is
// allowed (it always is). A directory not listed here falls under the rule of
// its closest listed parent.
var rules = map[string]struct {
	internal []string // pidnode packages (directories) that may be imported
	external []string // third-party import path prefixes that may be imported
	notStd   []string // standard library import path prefixes that may not be imported
}{
	"handlev":       {internal: []string{"internal/ascii", "internal/jsontext", "internal/unsafeconv"}, external: []string{"golang.org/x/net/idna"}},
	"handlev/hsmsg": {internal: []string{"handlev", "internal/ascii"}},
	"store":         {internal: []string{"handlev", "internal/cfgerr", "internal/procfloor", "internal/unsafeconv"}, external: []string{"go.etcd.io/bbolt"}},
	"cache":         {internal: []string{"handlev", "internal/cfgerr", "internal/promtext", "internal/unsafeconv"}, external: []string{"github.com/hashicorp/golang-lru/v2", "golang.org/x/sync/"}},
	"resolver":      {internal: []string{"handlev", "cache", "resolver/page", "internal/ascii", "internal/conntimeout", "internal/promtext", "internal/tokenbucket", "internal/unsafeconv", "internal/cfgerr"}, external: []string{"github.com/valyala/fasthttp", "golang.org/x/net/"}},
	// The HTML of the resolver's pages, as bytes: no HTTP and no cache, so
	// that what a page shows is decided by the resolver that calls it.
	"resolver/page": {internal: []string{"handlev", "internal/ascii"}, notStd: []string{"net/http", "html/template"}},
	"resolver/dns":  {internal: []string{"handlev", "cache", "internal/ascii", "internal/promtext", "internal/tokenbucket", "internal/connlimit", "internal/unsafeconv", "internal/cfgerr"}, external: []string{"github.com/miekg/dns"}},
	"resolver/hdl":  {internal: []string{"handlev", "handlev/hsmsg", "cache", "internal/ascii", "internal/cfgerr", "internal/connlimit", "internal/promtext", "internal/tokenbucket"}},
	"model":         {internal: []string{"handlev", "internal/jsontext", "internal/stdjson"}, external: []string{"github.com/BurntSushi/toml"}},
	"registry":      {internal: []string{"handlev", "store", "internal/cfgerr", "internal/jsontext", "internal/stdjson"}, external: []string{"go.etcd.io/bbolt"}},
	// The write service of identifiers: below every front that writes, above
	// the data layers; no HTTP, so that its errors are Go errors each front
	// maps in its own place.
	"write": {internal: []string{"handlev", "store", "model", "registry", "internal/cfgerr", "internal/stdjson", "internal/refusal"}, notStd: []string{"net/http", "html/template"}},
	// Who a secret or a session's key hash is, and the writes of keys:
	// below every front that authenticates (the API, the console), above
	// the registry; no HTTP, so that each front answers a refusal in its
	// own way (model for the one shape of a field's validation error).
	// Admission (suspension, rate limits, maintenance) is here too, so
	// that the API and the console admit through one function.
	"access": {internal: []string{"model", "registry", "internal/cfgerr", "internal/refusal", "internal/tokenbucket"}, notStd: []string{"net/http", "html/template"}},
	// The operator's decisions (applications, SNAAs) that the API's
	// /ops/v1 routes and the console's operator pages share; no HTTP.
	"operator": {internal: []string{"access", "handlev", "model", "registry", "internal/cfgerr", "internal/refusal"}, notStd: []string{"net/http", "html/template"}},
	// The accounts of people (invitations, passwords, TOTP, lockout,
	// roles, OpenID Connect verification) below the console and the API;
	// no HTTP but the OpenID Connect client's requests to the provider.
	"people": {internal: []string{"access", "model", "registry", "internal/cfgerr", "internal/refusal", "internal/promtext"}, external: []string{"github.com/coreos/go-oidc/v3/", "golang.org/x/oauth2", "golang.org/x/crypto/"}, notStd: []string{"html/template"}},
	// The read functions of identifiers (one, a namespace's page, the
	// history) that the API and the console share; no HTTP.
	"read": {internal: []string{"handlev", "store", "model", "registry", "internal/cfgerr", "internal/stdjson", "internal/refusal"}, notStd: []string{"net/http", "html/template"}},
	// admin imports webhook only for the limits its schemas document.
	"admin": {internal: []string{"access", "console", "handlev", "store", "model", "operator", "people", "read", "registry", "write", "stats", "webhook", "internal/cfgerr", "internal/httperr", "internal/route", "internal/refusal", "internal/buildinfo", "internal/promtext", "internal/tokenbucket"}},
	// The HTML console and application form: the same services as the
	// API (write, read, access, operator, people, stats' reads,
	// linkcheck's listing), never admin; admin mounts it.
	"console": {internal: []string{"access", "handlev", "linkcheck", "model", "operator", "people", "read", "registry", "stats", "write", "internal/httperr", "internal/route"}},
	// The one map from the services' errors to a problem, below both HTTP
	// fronts.
	"internal/httperr": {internal: []string{"access", "model", "operator", "people", "read", "write", "internal/refusal", "internal/route"}},
	// Resolution statistics, one feature whole (practice 18): the stats
	// bucket through store, the flush and retention jobs, its routes as
	// internal/route rows, its metrics. It reads cache.Counter's usage for
	// its metrics; the read path never imports it. It knows nothing of the
	// API (admin registers its routes) and nothing of cluster mode (cmd
	// hands it cluster's functions).
	"stats": {internal: []string{"handlev", "store", "cache", "internal/route", "internal/promtext"}},
	// The shape of a namespace route a feature builds and the API
	// registers: below admin and the features.
	"internal/route": {},
	// Link checks, one feature whole (practice 18): the checker (a job of
	// cmd, reading records and writing through the registry, fetching only
	// through internal/outbound), the results' bucket and their listing,
	// its routes as internal/route rows and its metrics. The console reads
	// the listing (List); never the API or the console.
	"linkcheck": {internal: []string{"handlev", "store", "registry", "internal/cfgerr", "internal/outbound", "internal/promtext", "internal/route"}, external: []string{"go.etcd.io/bbolt"}},
	// cluster mode: etcd's client, zstd for the values it stores there, and
	// the layers whose data it replicates. Nothing below cmd imports it.
	"cluster": {internal: []string{"handlev", "store", "model", "registry", "stats", "internal/cfgerr", "internal/promtext"}, external: []string{"go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/api/v3", "go.uber.org/zap", "google.golang.org/grpc", "github.com/klauspost/compress/zstd"}},
	// Webhooks: the endpoints' routes as internal/route rows and their
	// deliveries of the feed (registry), connecting out only through
	// internal/outbound.
	"webhook": {internal: []string{"handlev", "store", "registry", "internal/cfgerr", "internal/outbound", "internal/promtext", "internal/route"}, external: []string{"go.etcd.io/bbolt"}},
	// Test support: an embedded etcd server. Only _test.go files import it
	// (allowedInternal refuses it to every other file).
	"internal/etcdtest":  {external: []string{"go.etcd.io/etcd/", "go.uber.org/zap"}},
	"internal/storetest": {internal: []string{"handlev", "store"}},
	// The MaxMind DB reader behind --geoip-db; cmd hands its Country to the
	// resolver, which sees only a function.
	"internal/geoip": {external: []string{"github.com/oschwald/maxminddb-golang/v2"}},
	// Leaves: the standard library only. procfloor sits below store, ascii
	// below handlev and every front, promtext, buildinfo and tokenbucket below
	// admin, the resolvers and cmd; connlimit below the TCP fronts; jsontext
	// (the one JSON tokenizer and string encoder) below handlev, model and
	// stdjson; unsafeconv below handlev, store, cache and the fronts.
	"internal/procfloor": {},
	"internal/connlimit": {internal: []string{"internal/cfgerr"}},
	// Every TCP front's accept: cmd wraps each listener in it.
	"internal/shed":        {internal: []string{"internal/cfgerr", "internal/connlimit", "internal/promtext"}},
	"internal/conntimeout": {},
	"internal/ascii":       {},
	"internal/promtext":    {},
	"internal/buildinfo":   {},
	"internal/tokenbucket": {},
	"internal/outbound":    {},
	// encoding/json's text for model, registry, write and read, its strings
	// through jsontext's encoder.
	"internal/stdjson":    {internal: []string{"internal/jsontext"}},
	"internal/jsontext":   {},
	"internal/unsafeconv": {},
	"internal/cfgerr":     {},
	"internal/refusal":    {},
	"internal":            {internal: []string{"handlev", "handlev/hsmsg", "store", "cache", "resolver", "resolver/dns", "resolver/hdl", "admin", "access", "read", "write", "model", "registry", "people", "internal"}, external: []string{""}},
	"cmd":                 {internal: []string{"handlev", "handlev/hsmsg", "store", "cache", "resolver", "resolver/dns", "resolver/hdl", "admin", "access", "read", "write", "model", "registry", "stats", "cluster", "webhook", "linkcheck", "people", "internal"}, external: []string{""}},
	"bench":               {internal: []string{"handlev", "handlev/hsmsg", "store", "cache", "resolver", "resolver/dns", "resolver/hdl", "admin", "access", "read", "write", "model", "registry", "cluster", "internal", "bench"}, external: []string{""}},
}

func ruleFor(dir string) (string, bool) {
	for d := dir; d != "." && d != ""; d = filepath.Dir(d) {
		if _, ok := rules[d]; ok {
			return d, true
		}
	}
	return "", false
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && first != module
}

// TestImportDirection parses every non-test Go file of the module and checks each
// import against the rules above.
func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	checked := 0
	var violations []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		rule, ok := ruleFor(dir)
		if !ok {
			violations = append(violations, rel+": package directory "+dir+" has no import rule; add one to deps_test.go")
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		r := rules[rule]
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			switch {
			case isStd(p):
				if hasPrefixAny(p, r.notStd) {
					violations = append(violations, rel+" imports "+p+": not allowed for "+rule)
				}
			case p == module || strings.HasPrefix(p, module+"/"):
				target := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
				if target == dir {
					continue
				}
				if !allowedInternal(r.internal, target) {
					violations = append(violations, rel+" imports "+p+": not allowed for "+rule)
				}
			default:
				if !hasPrefixAny(p, r.external) {
					violations = append(violations, rel+" imports "+p+": third-party module not allowed for "+rule)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files checked: the walk is broken")
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

// allowedInternal reports whether target is one of the allowed packages. Each
// entry allows exactly that package, except "internal" and "bench", which allow
// their whole subtree. cmd and bench are never importable.
func allowedInternal(allowed []string, target string) bool {
	if target == "cmd" || strings.HasPrefix(target, "cmd/") || testOnly[target] {
		return false
	}
	for _, a := range allowed {
		if target == a {
			return true
		}
		if (a == "internal" || a == "bench") && strings.HasPrefix(target, a+"/") {
			return true
		}
	}
	return false
}

// testOnly are the packages only _test.go files may import: etcdtest starts
// an etcd server inside the process, storetest opens throwaway stores.
var testOnly = map[string]bool{"internal/etcdtest": true, "internal/storetest": true}

func hasPrefixAny(p string, prefixes []string) bool {
	for _, x := range prefixes {
		if strings.HasPrefix(p, x) {
			return true
		}
	}
	return false
}

// TestRulesCatchViolations makes sure the checker is not vacuous: a resolver
// importing store, and handlev importing anything but the standard library,
// must be refused.
func TestRulesCatchViolations(t *testing.T) {
	cases := []struct {
		from, target string
		want         bool
	}{
		{"resolver", "store", false},
		{"resolver", "cache", true},
		{"cache", "store", false},
		{"handlev", "cache", false},
		{"store", "cache", false},
		{"admin", "resolver", false},
		{"model", "store", false},
		{"model", "admin", false},
		{"admin", "model", true},
		{"admin", "registry", true},
		{"registry", "admin", false},
		{"registry", "model", false},
		{"store", "registry", false},
		{"model", "registry", false},
		{"cmd", "bench", false},
		{"internal", "cmd/pidnode", false},
		{"resolver/hdl", "handlev/hsmsg", true},
		{"handlev", "internal/ascii", true},
		{"handlev", "internal/procfloor", false},
		{"internal/ascii", "handlev", false},
		{"store", "internal/unsafeconv", true},
		{"internal/unsafeconv", "handlev", false},
		{"cluster", "registry", true},
		{"cluster", "admin", false},
		{"registry", "cluster", false},
		{"admin", "cluster", false},
		{"resolver", "cluster", false},
		{"cmd", "cluster", true},
		{"cmd", "internal/etcdtest", false},
		{"cluster", "internal/etcdtest", false},
		{"write", "internal/storetest", false},
		{"write", "admin", false},
		{"write", "registry", true},
		{"admin", "write", true},
		{"registry", "write", false},
		{"model", "write", false},
		{"stats", "admin", false},
		{"stats", "registry", false},
		{"stats", "internal/route", true},
		{"admin", "stats", true},
		{"cache", "stats", false},
		{"resolver", "stats", false},
		{"resolver", "resolver/page", true},
		{"resolver/page", "cache", false},
		{"resolver/page", "resolver", false},
		{"internal/route", "admin", false},
		{"linkcheck", "internal/route", true},
		{"linkcheck", "admin", false},
		{"linkcheck", "webhook", false},
		{"webhook", "internal/route", true},
		{"webhook", "admin", false},
		{"webhook", "linkcheck", false},
		{"console", "admin", false},
		{"admin", "console", true},
		{"console", "store", false},
		{"operator", "admin", false},
		{"operator", "console", false},
		{"access", "operator", false},
		{"console", "operator", true},
		{"internal/httperr", "admin", false},
		{"console", "linkcheck", true},
		{"linkcheck", "console", false},
	}
	for _, c := range cases {
		if got := allowedInternal(rules[c.from].internal, c.target); got != c.want {
			t.Errorf("allowedInternal(%s → %s) = %v, want %v", c.from, c.target, got, c.want)
		}
	}
	if hasPrefixAny("github.com/valyala/fasthttp", rules["resolver/page"].external) || !hasPrefixAny("net/http", rules["resolver/page"].notStd) {
		t.Error("resolver/page may speak HTTP: rule is broken")
	}
	if !hasPrefixAny("net/http", rules["operator"].notStd) {
		t.Error("operator may import net/http: rule is broken")
	}
	if !hasPrefixAny("net/http", rules["write"].notStd) {
		t.Error("write may import net/http: rule is broken")
	}
	if hasPrefixAny("github.com/valyala/fasthttp", rules["handlev"].external) {
		t.Error("handlev may import fasthttp: rule is broken")
	}
}
