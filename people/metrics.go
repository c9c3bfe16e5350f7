package people

import "pidnode/internal/promtext"

// AppendMetrics appends the sign-in counters in the Prometheus text format:
// pidnode_people_signins_total by result (ok, denied, locked: refused
// unchecked while the account is locked) and pidnode_people_lockouts_total.
func (s *Service) AppendMetrics(b []byte) []byte {
	const signIns = "pidnode_people_signins_total"
	b = promtext.Header(b, signIns, promtext.Counter, "Sign-ins of people (password or OpenID Connect), by result.")
	for i, r := range [...]string{"ok", "denied", "locked"} {
		b = promtext.Uint(b, signIns, s.signIns[i].Load(), promtext.L("result", r))
	}
	return promtext.CounterFamily(b, "pidnode_people_lockouts_total", "Accounts locked after repeated failed sign-ins.", s.lockouts.Load())
}
