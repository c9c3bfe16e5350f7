// Package geoip reads the country of a client address from a MaxMind DB file
// (GeoLite2-Country, GeoIP2-Country or -City, or any MMDB whose records carry
// country.iso_code), for the resolver's "country" choice among the locations
// of a 10320/loc value (docs/handle-protocol.md §2.1).
//
// It owns the open database and nothing else: no download, no update (an
// operator replaces the file and restarts the node). It imports the
// standard library and github.com/oschwald/maxminddb-golang/v2 only.
package geoip

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/oschwald/maxminddb-golang/v2"
)

// DB is an open MaxMind database. Country is safe for concurrent use.
type DB struct {
	r *maxminddb.Reader
}

// ErrNoCountry: the database's records carry no country.iso_code where an
// address was found (Open looks at the first networks it holds).
var ErrNoCountry = errors.New("geoip: the database has no country.iso_code")

// Open opens the MaxMind DB file at path (memory-mapped) and checks that it
// reads: a file that is not an MMDB, or whose records have no country code,
// is an error, so that a wrong file stops the node at start-up rather than
// silently choosing no country.
func Open(path string) (*DB, error) {
	r, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("geoip: %w", err)
	}
	d := &DB{r: r}
	if err := d.check(); err != nil {
		r.Close()
		return nil, err
	}
	return d, nil
}

// check looks for one record with a country in the database, walking its
// networks; an empty database passes (it knows no address).
func (d *DB) check() error {
	n := 0
	for res := range d.r.Networks() {
		if err := res.Err(); err != nil {
			return fmt.Errorf("geoip: %w", err)
		}
		var iso string
		if err := res.DecodePath(&iso, "country", "iso_code"); err != nil {
			return fmt.Errorf("geoip: %w", err)
		}
		if len(iso) == 2 {
			return nil
		}
		if n++; n >= 1024 {
			break
		}
	}
	if n == 0 {
		return nil
	}
	return ErrNoCountry
}

// Country returns the ISO 3166-1 alpha-2 code (as the database writes it,
// normally upper case) of the country ip is in; ok=false when the database
// does not know the address or its record has no two-letter code.
func (d *DB) Country(ip netip.Addr) (code [2]byte, ok bool) {
	var iso string
	if err := d.r.Lookup(ip.Unmap()).DecodePath(&iso, "country", "iso_code"); err != nil || len(iso) != 2 {
		return code, false
	}
	return [2]byte{iso[0], iso[1]}, true
}

// Close unmaps the database.
func (d *DB) Close() error { return d.r.Close() }
