package deptest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Rooms stay small enough to read (docs/architecture.md practice 19): no
// package of more than maxPackageLines lines of non-test Go, no type with
// more than maxMethods methods.
const (
	maxPackageLines = 4500
	maxMethods      = 60
)

// oversized are the packages and types still over the limits, each with the
// ceiling it may not grow past; an entry goes once its package or type is
// split. A package or type over the limit and not listed fails, and so does
// a listed one that has come under the limit (so that its entry goes).
var oversized = map[string]int{}

// roomSizes returns the non-test lines of each package directory and the
// method count of each named type ("dir.Type"), for the module at root.
func roomSizes(root string) (lines, methods map[string]int, err error) {
	lines, methods = map[string]int{}, map[string]int{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		dir := filepath.ToSlash(rel)
		lines[dir] += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			if name := recvName(fn.Recv.List[0].Type); name != "" {
				methods[dir+"."+name]++
			}
		}
		return nil
	})
	return lines, methods, err
}

// recvName is the type name of a method receiver (T, *T, T[P], *T[P]).
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// checkRooms returns the violations of the limits in lines and methods.
func checkRooms(lines, methods map[string]int, oversized map[string]int) []string {
	var bad []string
	check := func(what string, n, limit int) {
		ceiling, listed := oversized[what]
		switch {
		case listed && n <= limit:
			bad = append(bad, what+" is within the limit now ("+strconv.Itoa(n)+"): remove its oversized entry")
		case listed && n > ceiling:
			bad = append(bad, what+" has grown to "+strconv.Itoa(n)+", past its ceiling "+strconv.Itoa(ceiling)+": split it instead")
		case !listed && n > limit:
			bad = append(bad, what+" is "+strconv.Itoa(n)+", over the limit "+strconv.Itoa(limit)+": split it by concept")
		}
	}
	for dir, n := range lines {
		check("package "+dir, n, maxPackageLines)
	}
	for typ, n := range methods {
		check("type "+typ, n, maxMethods)
	}
	sort.Strings(bad)
	return bad
}

// TestRoomSizes: every package and type of the module is within the limits
// (or within its oversized ceiling).
func TestRoomSizes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	lines, methods, err := roomSizes(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 || len(methods) == 0 {
		t.Fatal("nothing measured: the walk is broken")
	}
	for _, v := range checkRooms(lines, methods, oversized) {
		t.Error(v)
	}
}

// TestRoomLimitsCatch makes sure the check is not vacuous.
func TestRoomLimitsCatch(t *testing.T) {
	lines := map[string]int{"small": 10, "big": maxPackageLines + 1, "listed": maxPackageLines + 5}
	methods := map[string]int{"small.T": 3, "big.T": maxMethods + 1}
	got := checkRooms(lines, methods, map[string]int{"package listed": maxPackageLines + 2})
	want := []string{"package big", "package listed", "type big.T"}
	if len(got) != len(want) {
		t.Fatalf("checkRooms = %q, want violations of %q", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+" ") {
			t.Errorf("violation %d = %q, want one of %s", i, got[i], w)
		}
	}
}
