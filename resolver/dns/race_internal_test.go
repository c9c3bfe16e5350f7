//go:build race

package hdldns

const raceBuild = true
