// Package deptest holds the test that enforces pidnode's import direction
// (docs/architecture.md "Layout"): lower layers never import upper ones, peers never import
// each other, and nothing imports cmd or bench. It has no non-test code.
package deptest
