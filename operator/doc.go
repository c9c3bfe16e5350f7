// Package operator is the operator's service: the decisions on
// applications and SNAAs, in plain Go below both fronts that make them —
// the admin API's /ops/v1 routes and the public /apply/v1 route, and the
// HTML console's operator pages and application form. Each decision has
// one path here, with one validation, one audit entry and one set of
// errors, whichever front calls it (docs/product.md §4.1, §4.2).
//
// It owns: submitting an application (the checks of its fields, the
// policy's version and its limit of open applications per contact e-mail
// address), an applicant's view of its application by status token,
// approving one (the SNAA, its namespace — chosen or drawn so that it
// spells no part of the organisation's name — its prefixes, its etcd shard
// and its first key, in one transaction), rejecting one, and changing an
// SNAA (suspension, custom ids, prefixes, its key limit); the application
// policy (Policy, its built-in text policy.txt).
//
// Every write goes through access.Keys.Update: all-or-nothing with its
// audit entries, a refusal commits nothing, the cache of keys is
// invalidated after.
//
// Errors: a refusal is a *refusal.Error of ErrNotFound or ErrConflict (the
// fronts map them, the API to 404 and 409), a faulty field a
// *model.ValidationError; anything else (the database, a Writer that
// cannot reach etcd) passes through unchanged.
//
// It must not: import net/http (each front reads its own requests and
// answers in its own way), limit clients (the fronts charge
// access.Admission's per-address limits first), or write identifiers.
package operator
