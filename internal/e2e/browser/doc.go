// Package browser holds the real-browser end-to-end check: headless
// Debian Chromium, driven with chromedp, loads the resolver's home page, a
// redirect, a ?noredirect page, a tombstone and a 404 from the real binary and
// checks what a person sees (titles, table rows, link targets), including
// pages of an identifier whose metadata is full of XSS payloads. Screenshots
// go to a temporary directory, or to bench/results/e2e when PIDNODE_E2E_SHOTS
// is set.
//
// It has tests only, behind the e2e build tag so that `make test` needs no
// browser; `make e2e` installs chromium if missing and runs them.
package browser
