package model

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoTransportNoStorage holds the package to its doc comment: the console
// and the cluster applier use it, so it must not pull in an HTTP stack or the
// database (internal/deptest checks pidnode and third-party imports; this
// checks the standard library ones).
func TestNoTransportNoStorage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			// net/url parses landing page URLs; no other part of net.
			if (p == "net" || strings.HasPrefix(p, "net/")) && p != "net/url" || p == "database/sql" || p == "pidnode/store" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no files checked")
	}
}
