package admin

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"pidnode/internal/buildinfo"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// lintMetrics parses Prometheus text and runs promlint over it; it also checks
// the naming rules of docs/architecture.md practice 13 and that no label value names a
// handle. It returns the parsed families by name.
func lintMetrics(t *testing.T, text []byte) map[string]bool {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, text)
	}
	problems, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		t.Errorf("promlint: %s: %s", pr.Metric, pr.Text)
	}
	names := map[string]bool{}
	for name, f := range fams {
		names[name] = true
		if !strings.HasPrefix(name, "pidnode_") {
			t.Errorf("%s: not pidnode_<subsystem>_…", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v := l.GetValue(); strings.Contains(v, "21.") && l.GetName() != "route" {
					t.Errorf("%s: label %s=%q looks like a handle", name, l.GetName(), v)
				}
				// An _info family is one series whose labels describe the
				// build; every other family stays at four labels or fewer.
				if len(m.GetLabel()) > 4 && !(strings.HasSuffix(name, "_info") && len(f.GetMetric()) == 1) {
					t.Errorf("%s: %d labels", name, len(m.GetLabel()))
				}
			}
		}
	}
	return names
}

func TestMetricsLint(t *testing.T) {
	extra := func(w io.Writer) error {
		_, err := io.WriteString(w, "# HELP pidnode_test_extra_total An extra source.\n# TYPE pidnode_test_extra_total counter\npidnode_test_extra_total 3\n")
		return err
	}
	e := newEnv(t, func(c *Config) { c.Metrics = extra })
	a := e.snaa(map[string]any{"namespace": "MET"})
	e.want(e.do("PUT", "/pid/v2/handles/21.12345/MET/", a.Key.Secret, validPayload()), 201)
	e.want(e.do("GET", "/pid/v2/handles/21.12345/MET/nope", a.Key.Secret, nil), 404)
	e.want(e.do("GET", "/no/such/route", "", nil), 404)
	r := e.want(e.do("GET", "/metrics", "", nil), 200)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	names := lintMetrics(t, r.Body)
	for _, want := range []string{"pidnode_admin_requests_total", "pidnode_admin_request_duration_seconds",
		"pidnode_admin_writes_total", "pidnode_admin_commit_groups_total", "pidnode_admin_commit_group_writes_total", "pidnode_store_free_pages", "pidnode_store_file_size_bytes",
		"pidnode_build_info", "pidnode_test_extra_total"} {
		if !names[want] {
			t.Errorf("metrics lack %s", want)
		}
	}
	body := string(r.Body)
	bi := buildinfo.Read()
	wantInfo := fmt.Sprintf(`pidnode_build_info{version=%q,revision=%q,vcs_time=%q,modified=%q,goversion=%q} 1`,
		bi.Version, bi.Revision, bi.Time, bi.Modified, bi.GoVersion)
	if !strings.Contains(body, wantInfo+"\n") {
		t.Errorf("metrics lack %s", wantInfo)
	}
	for _, want := range []string{
		`pidnode_admin_requests_total{route="GET /pid/v2/handles/{prefix}/{ns}/{id...}",status="404"} 1`,
		`pidnode_admin_requests_total{route="PUT /pid/v2/handles/{prefix}/{ns}/{id...}",status="201"} 1`,
		`pidnode_admin_request_duration_seconds_count{route="POST /ops/v1/applications"} 1`,
		`pidnode_admin_requests_total{route="/",status="404"} 1`,
		"pidnode_admin_commit_groups_total 1\n",
		"pidnode_admin_commit_group_writes_total 1\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
}
