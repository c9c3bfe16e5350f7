// Package buildinfo reads what the Go toolchain recorded about the running
// binary (module version, VCS revision and time, a modified tree, Go version)
// and renders it the same way for `pidnode version`, the start-up banner and
// the pidnode_build_info metric.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is the build of a binary. Fields the build did not record hold
// "unknown" (Version "(devel)", as the toolchain writes it for a build from a
// work tree), so every rendering has the same fields.
type Info struct {
	Version   string // module version: v1.2.3, a pseudo-version, or (devel)
	Revision  string // VCS revision (commit hash)
	Time      string // VCS commit time, RFC 3339
	Modified  string // "true" when the work tree had uncommitted changes, "false", or "unknown"
	GoVersion string // the toolchain that built it, e.g. go1.26.8
}

const unknown = "unknown"

// Read is the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return From(nil)
	}
	return From(bi)
}

// From extracts an Info from bi (nil: nothing recorded; the Go version is then
// the running runtime's).
func From(bi *debug.BuildInfo) Info {
	in := Info{Version: "(devel)", Revision: unknown, Time: unknown, Modified: unknown, GoVersion: runtime.Version()}
	if bi == nil {
		return in
	}
	if bi.Main.Version != "" {
		in.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		if s.Value == "" {
			continue
		}
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value
		}
	}
	return in
}

// String is the one-line form: "v1.2.3 revision 0123abcd… (2026-11-23T21:00:00Z,
// modified) go1.26.8". A modified tree says so; an unmodified one says nothing.
func (in Info) String() string {
	var b strings.Builder
	b.WriteString(in.Version)
	b.WriteString(" revision ")
	b.WriteString(in.Revision)
	b.WriteString(" (")
	b.WriteString(in.Time)
	switch in.Modified {
	case "true":
		b.WriteString(", modified")
	case "false":
	default:
		b.WriteString(", modified unknown")
	}
	b.WriteString(") ")
	b.WriteString(in.GoVersion)
	return b.String()
}

// Labels are the pidnode_build_info label pairs, name then value, in a fixed order.
func (in Info) Labels() [][2]string {
	return [][2]string{
		{"version", in.Version},
		{"revision", in.Revision},
		{"vcs_time", in.Time},
		{"modified", in.Modified},
		{"goversion", in.GoVersion},
	}
}
