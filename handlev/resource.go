package handlev

import "pidnode/internal/jsontext"

// A Resource is what pidnode reads of a RESOURCE value, the landing-page
// metadata of a record written under a model (docs/metadata-model.md,
// resource_info): the label and description the tombstone page shows, the
// resource category and each representation variant's URL and media type,
// which the resolver's signposting and content negotiation use and the link
// checker checks. A member that is absent or not a string is nil. The
// slices point into the value's data or into the arena ReadResource was
// given.
type Resource struct {
	Label, Description, Category []byte
	Variants                     []Variant
}

// A Variant is one item of a RESOURCE value's representation_variants.
type Variant struct{ URL, MediaType []byte }

// ReadResource reads the data of a RESOURCE value in one pass over the
// tokenizer (internal/jsontext), without encoding/json: the resolver's miss
// path builds the extras of nearly every record from it
// (BenchmarkReadResource compares the two). The data must be
// one JSON object; its "label", "description" and "resource_category"
// members are read if they are strings, and its "representation_variants"
// member if it is an array: each item that is an object gives a Variant
// (with "variant_url" and "media_type" if they are strings), other items
// are skipped. Keys match exactly; of a repeated key the last counts; every
// other member is skipped. Strings decode as encoding/json decodes them
// (invalid UTF-8 and lone surrogate escapes as U+FFFD).
//
// It checks the syntax of every byte (nesting up to jsontext.MaxDepth) and
// reports ok == false, with a zero Resource, for anything that is not one
// well-formed JSON object. A string with escapes is decoded into arena,
// whose spare capacity ReadResource may overwrite: bytes before len(arena)
// are kept, so earlier slices of the arena stay valid. It returns the arena
// grown. It never panics.
func ReadResource(data, arena []byte) (r Resource, out []byte, ok bool) {
	s := jsontext.Scanner{B: data, Replace: true}
	str := func(i int) ([]byte, int, bool) {
		e, esc, ok := s.SkipString(i)
		if !ok {
			return nil, 0, false
		}
		if !esc {
			return data[i+1 : e-1 : e-1], e, true
		}
		start := len(arena)
		a, e, ok := s.AppendString(arena, i)
		if !ok {
			return nil, 0, false
		}
		arena = a
		return a[start:len(a):len(a)], e, true
	}
	// member reads a string member into *dst, or skips a value of another
	// type and sets *dst to nil.
	member := func(dst *[]byte, j, depth int) (int, bool) {
		if j < len(data) && data[j] == '"' {
			v, e, ok := str(j)
			*dst = v
			return e, ok
		}
		*dst = nil
		return s.Skip(j, depth)
	}
	i := s.Space(0)
	end, ok := s.Object(i, func(key []byte, j int) (int, bool) {
		switch string(key) {
		case "label":
			return member(&r.Label, j, 1)
		case "description":
			return member(&r.Description, j, 1)
		case "resource_category":
			return member(&r.Category, j, 1)
		case "representation_variants":
			r.Variants = r.Variants[:0]
			if j >= len(data) || data[j] != '[' {
				return s.Skip(j, 1)
			}
			return s.Array(j, func(k int) (int, bool) {
				if k >= len(data) || data[k] != '{' {
					return s.Skip(k, 2)
				}
				var v Variant
				e, ok := s.Object(k, func(key []byte, m int) (int, bool) {
					switch string(key) {
					case "variant_url":
						return member(&v.URL, m, 3)
					case "media_type":
						return member(&v.MediaType, m, 3)
					}
					return s.Skip(m, 3)
				})
				r.Variants = append(r.Variants, v)
				return e, ok
			})
		}
		return s.Skip(j, 1)
	})
	if !ok || s.Space(end) != len(data) {
		return Resource{}, arena, false
	}
	return r, arena, true
}
