package deptest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// outsideDoc matches a reference to a document that lives outside the
// repository (the specification the project started from): code must cite
// docs/ in the tree instead, where the same sections keep their numbers.
var outsideDoc = regexp.MustCompile(`\bSPEC(\.md)?\s*§|\bSPEC\.md\b|HANDLE-PROTOCOL|METADATA-MODEL|\bSTYLE(\.md\b| practice)|service-description`)

// TestNoReferenceOutsideTheTree reads every Go file, shell script and
// Makefile of the module and fails on a reference to a document that is not
// in the tree.
func TestNoReferenceOutsideTheTree(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if name == "docrefs_test.go" { // its pattern names them
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".sh") && name != "Makefile" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for line := 1; sc.Scan(); line++ {
			if outsideDoc.MatchString(sc.Text()) {
				rel, _ := filepath.Rel(root, path)
				found = append(found, rel+":"+strconv.Itoa(line)+": "+strings.TrimSpace(sc.Text()))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("cites a document outside the repository (cite docs/ instead): %s", f)
	}
}
