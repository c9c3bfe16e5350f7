// Package promtext appends metrics in the Prometheus text exposition format
// (version 0.0.4): the HELP and TYPE lines of a family and its samples, with
// label values and help text escaped as the format requires. It is the one
// writer of /metrics text for admin, the resolvers and cmd/pidnode
// (docs/architecture.md practice 13: names pidnode_<subsystem>_<name>, labels
// from small fixed sets).
//
// The functions append to dst and allocate nothing beyond growing it. Metric
// and label names are not checked: callers pass constants that are valid
// names. Label values and help text may be any string; invalid UTF-8 is
// written as U+FFFD, since the format is UTF-8.
//
// It imports the standard library only.
package promtext
