package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromAndString(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want Info
		str  string
	}{
		{"nothing recorded", nil,
			Info{"(devel)", unknown, unknown, unknown, runtime.Version()},
			"(devel) revision unknown (unknown, modified unknown) " + runtime.Version()},
		{"release from the module proxy", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "pidnode", Version: "v1.4.0"}},
			Info{"v1.4.0", unknown, unknown, unknown, "go1.26.8"},
			"v1.4.0 revision unknown (unknown, modified unknown) go1.26.8"},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "pidnode", Version: "v0.0.0-20261123210000-0123456789ab"},
			Settings: set("-trimpath", "true", "vcs", "git", "vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2026-11-23T21:00:00Z", "vcs.modified", "false")},
			Info{"v0.0.0-20261123210000-0123456789ab", "0123456789abcdef0123456789abcdef01234567", "2026-11-23T21:00:00Z", "false", "go1.26.8"},
			"v0.0.0-20261123210000-0123456789ab revision 0123456789abcdef0123456789abcdef01234567 (2026-11-23T21:00:00Z) go1.26.8"},
		{"modified tree", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "pidnode", Version: "(devel)"},
			Settings: set("vcs.revision", "abc", "vcs.time", "2026-11-23T21:00:00Z", "vcs.modified", "true")},
			Info{"(devel)", "abc", "2026-11-23T21:00:00Z", "true", "go1.26.8"},
			"(devel) revision abc (2026-11-23T21:00:00Z, modified) go1.26.8"},
		{"empty values are unknown", &debug.BuildInfo{Settings: set("vcs.revision", "", "vcs.time", "", "vcs.modified", "")},
			Info{"(devel)", unknown, unknown, unknown, runtime.Version()},
			"(devel) revision unknown (unknown, modified unknown) " + runtime.Version()},
	} {
		got := From(c.bi)
		if got != c.want {
			t.Errorf("%s: From = %+v, want %+v", c.name, got, c.want)
		}
		if s := got.String(); s != c.str {
			t.Errorf("%s: String = %q, want %q", c.name, s, c.str)
		}
		labels := got.Labels()
		want := [][2]string{{"version", c.want.Version}, {"revision", c.want.Revision}, {"vcs_time", c.want.Time},
			{"modified", c.want.Modified}, {"goversion", c.want.GoVersion}}
		if len(labels) != len(want) {
			t.Fatalf("%s: %d labels, want %d", c.name, len(labels), len(want))
		}
		for i := range want {
			if labels[i] != want[i] {
				t.Errorf("%s: label %d = %v, want %v", c.name, i, labels[i], want[i])
			}
		}
	}
}

// The test binary itself carries build information (at least the Go version).
func TestReadRunning(t *testing.T) {
	in := Read()
	if in.GoVersion != runtime.Version() {
		t.Errorf("GoVersion %q, want %q", in.GoVersion, runtime.Version())
	}
	if in.Version == "" || in.Revision == "" || in.Time == "" || in.Modified == "" {
		t.Errorf("empty field in %+v", in)
	}
}
