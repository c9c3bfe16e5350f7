// Package deptest holds the tests that enforce pidnode's layout
// (docs/architecture.md "Layout" and "Import direction"): lower layers never
// import upper ones, peers never import each other, and nothing imports cmd
// or bench (TestImportDirection); the layout's stated imports match the
// rules (TestLayoutMatchesRules); packages and types stay within the size
// limits of practice 19 (TestRoomSizes). It has no non-test code.
package deptest
