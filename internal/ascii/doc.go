// Package ascii is ASCII case folding for protocol text: handle prefixes and
// schemes, value types, DNS names, media types, query words. Only the 26
// letters fold; every other byte, including each byte of a multi-byte UTF-8
// sequence, compares as itself, so the result never depends on Unicode
// tables (strings.EqualFold would fold "K" with the Kelvin sign U+212A).
//
// The functions take strings and byte slices alike (generic over both) so a
// caller compares request bytes with a constant without converting either;
// none allocates. It imports nothing and must stay a leaf: every package may
// use it.
package ascii
