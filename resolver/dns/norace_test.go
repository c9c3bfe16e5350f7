//go:build !race

package hdldns_test

const raceEnabled = false
