package webhook

import "errors"

// ErrConfig: Config is missing a required field or has a bad one.
var ErrConfig = errors.New("webhook: invalid configuration")

// errConflict: the endpoint's cursor or attempt count changed since it was
// read (another deliverer during a lead's overlap); the caller re-reads.
var errConflict = errors.New("webhook: endpoint changed since it was read")

// errGone: the endpoint was deleted or disabled since it was read.
var errGone = errors.New("webhook: endpoint gone")
