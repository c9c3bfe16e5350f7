package console

import (
	"slices"
	"strconv"
	"strings"
)

// What changed between two versions of an identifier, field by field, as
// the history (each entry's before → after) and the edit conflict (the
// current version beside the edit that could not be saved) show it.

// fieldChange is one field whose value differs: Label names it as the form
// does ("Resource info › Label"), Before and After are its values as text,
// "" where it has none.
type fieldChange struct {
	Field, Label  string
	Before, After string
}

// fieldChanges compares two versions ({"url": …, "metadata": {…}}, either
// nil) leaf by leaf: an object's members and a list's items each count as a
// field, so that a long list names the one item that changed.
func fieldChanges(before, after any) []fieldChange {
	b, a := map[string]string{}, map[string]string{}
	flatten(b, "", before)
	flatten(a, "", after)
	var keys []string
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, comparePaths)
	var out []fieldChange
	for _, k := range keys {
		if b[k] != a[k] {
			out = append(out, fieldChange{Field: k, Label: pathLabel(k), Before: b[k], After: a[k]})
		}
	}
	return out
}

// flatten writes the leaves of x into out by path ("metadata.status",
// "metadata.resource_info.representation_variants[0].size").
func flatten(out map[string]string, path string, x any) {
	switch v := x.(type) {
	case nil:
	case map[string]any:
		for k, c := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(out, p, c)
		}
	case []any:
		for i, c := range v {
			flatten(out, path+"["+strconv.Itoa(i)+"]", c)
		}
	default:
		out[path] = formatScalar(x)
	}
}

// comparePaths orders paths as a person reads a record: the landing page
// first, then the fields by name, list items by number.
func comparePaths(a, b string) int {
	if a == b {
		return 0
	}
	if a == "url" {
		return -1
	}
	if b == "url" {
		return 1
	}
	as, bs := pathKey(a), pathKey(b)
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			ai, aerr := strconv.Atoi(as[i])
			bi, berr := strconv.Atoi(bs[i])
			if aerr == nil && berr == nil {
				return ai - bi
			}
			return strings.Compare(as[i], bs[i])
		}
	}
	return len(as) - len(bs)
}

func pathKey(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
}
