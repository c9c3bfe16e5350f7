package resolver

import "testing"

// TestDrainClosesConnections: before Drain, keep-alive; after it, every
// response asks the client to close, while requests are still answered.
func TestDrainClosesConnections(t *testing.T) {
	f := newFixture(t, nil)
	req := "GET /" + tExtra + "/order HTTP/1.1\r\nHost: x\r\n\r\n"
	if resp := f.raw(t, req); resp.ConnectionClose() {
		t.Fatal("Connection: close before Drain")
	}
	f.srv.Drain()
	resp := f.raw(t, req)
	if resp.StatusCode() != 302 || !resp.ConnectionClose() {
		t.Errorf("after Drain: status %d, Connection: close %v; want 302 and close", resp.StatusCode(), resp.ConnectionClose())
	}
}
