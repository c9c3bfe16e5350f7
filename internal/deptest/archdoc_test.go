package deptest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// layoutEntry matches the start of a package's entry in the layout block
// of docs/architecture.md: its directory at the start of a line.
var layoutEntry = regexp.MustCompile(`^([a-z][a-z0-9/]*)/ +`)

// layoutImports reads docs/architecture.md's layout block and returns, for
// each directory with an import rule, the pidnode packages its entry says
// it imports ("Imports a, b and c."), and whether it says "Standard library
// only". Entries that say neither are left out.
func layoutImports(t *testing.T, doc string) (imports map[string][]string, stdOnly map[string]bool) {
	t.Helper()
	start := strings.Index(doc, "## Layout")
	end := strings.Index(doc[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("docs/architecture.md has no Layout section")
	}
	block := doc[start : start+1+end]
	entries := map[string]string{}
	var cur string
	for _, line := range strings.Split(block, "\n") {
		if m := layoutEntry.FindStringSubmatch(line); m != nil {
			cur = m[1]
			entries[cur] = line[len(m[0]):]
		} else if cur != "" && strings.HasPrefix(line, " ") {
			entries[cur] += " " + strings.TrimSpace(line)
		} else {
			cur = ""
		}
	}
	imports, stdOnly = map[string][]string{}, map[string]bool{}
	for dir, text := range entries {
		if _, ok := rules[dir]; !ok {
			continue
		}
		if strings.Contains(text, "Standard library only") {
			stdOnly[dir] = true
			continue
		}
		i := strings.Index(text, "Imports ")
		if i < 0 {
			continue
		}
		sentence := text[i+len("Imports "):]
		if j := strings.IndexAny(sentence, ".;"); j >= 0 {
			sentence = sentence[:j]
		}
		got := []string{}
		for _, tok := range strings.FieldsFunc(strings.ReplaceAll(sentence, " and ", ","), func(r rune) bool { return r == ',' }) {
			tok = strings.TrimSpace(tok)
			if _, err := os.Stat(filepath.Join("../..", tok)); err == nil && tok != "" && !strings.Contains(tok, " ") {
				got = append(got, tok)
			}
		}
		sort.Strings(got)
		imports[dir] = got
	}
	return imports, stdOnly
}

// TestLayoutMatchesRules: what docs/architecture.md's layout says each
// package imports is what the rules above allow it.
func TestLayoutMatchesRules(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	imports, stdOnly := layoutImports(t, string(b))
	if len(imports) < 10 {
		t.Fatalf("only %d layout entries name their imports: the parse is broken", len(imports))
	}
	for dir := range stdOnly {
		if len(rules[dir].internal) != 0 {
			t.Errorf("docs/architecture.md says %s imports the standard library only; its rule allows %v", dir, rules[dir].internal)
		}
	}
	for dir, got := range imports {
		want := slices.Sorted(slices.Values(rules[dir].internal))
		if !slices.Equal(got, want) {
			t.Errorf("docs/architecture.md says %s imports %v; its rule allows %v", dir, got, want)
		}
	}
}
