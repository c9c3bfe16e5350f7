package ascii

// Text is what the functions compare: a string or a byte slice.
type Text interface{ ~string | ~[]byte }

// Lower returns c with 'A'–'Z' mapped to 'a'–'z'.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Upper returns c with 'a'–'z' mapped to 'A'–'Z'.
func Upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// EqualFold reports whether a and b are equal under ASCII case folding.
func EqualFold[A, B Text](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if x, y := a[i], b[i]; x != y && Lower(x) != Lower(y) {
			return false
		}
	}
	return true
}

// HasPrefixFold reports whether s begins with prefix under ASCII case folding.
func HasPrefixFold[A, B Text](s A, prefix B) bool {
	return len(s) >= len(prefix) && EqualFold(s[:len(prefix)], prefix)
}

// HasSuffixFold reports whether s ends with suffix under ASCII case folding.
func HasSuffixFold[A, B Text](s A, suffix B) bool {
	return len(s) >= len(suffix) && EqualFold(s[len(s)-len(suffix):], suffix)
}
