// Package outbound is the one way pidnode connects to addresses its users
// supply: link checks of target URLs and webhook deliveries (docs/product.md
// §4.4 and §4.5). Its client never connects to a loopback, private, link-local,
// shared, documentation, multicast or otherwise non-global address unless
// the operator allowed that network (--outbound-allow), and it checks the
// address after DNS resolution, on every connection (redirects included), so
// a name that resolves to 127.0.0.1 or 169.254.169.254 is refused like the
// address itself. It sends no cookies and no credentials, uses no proxy from
// the environment, and bounds redirects, header bytes and time.
//
// It imports only the standard library.
package outbound
