package write

import "pidnode/store"

// How a write's verdict leaves its transaction. A Writer may run the
// function it commits more than once (a commit group re-runs its members
// after a failed partner), and a write the client is refused must not
// abort the group: inside the transaction such a refusal is a refusal
// value, which the write's callback stores in its outcome and answers nil
// to the Writer; the caller returns the outcome's error after the commit.

// outcome carries a write's verdict out of a (possibly re-run) Commit
// callback: a callback that refuses returns nil without writing, so that the
// other writes of its group are not rolled back and re-run.
type outcome struct{ err error }

func (o *outcome) fail(err error) error { o.err = err; return nil }

// refused is fail for a client's error (refusal) and err itself for any
// other (which rolls back).
func (o *outcome) refused(err error) error {
	if r, ok := err.(refusal); ok {
		return o.fail(r.err)
	}
	return err
}

// refusal marks an error of a write inside the transaction that is the
// client's (the write fails alone), as opposed to one that aborts the
// transaction.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }

// writeResult is the effect of one create or update inside a transaction.
type writeResult struct {
	key     string
	stored  store.Stored
	written bool
}
