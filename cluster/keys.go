package cluster

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
)

// etcd key of a bucket entry: prefix + bucket + "/" + key (doc.go).
func entryKey(prefix, bucket string, key []byte) string {
	b := make([]byte, 0, len(prefix)+len(bucket)+1+len(key))
	b = append(b, prefix...)
	b = append(b, bucket...)
	b = append(b, '/')
	b = append(b, key...)
	return string(b)
}

// movedKey is the key, in the etcd of the shard a namespace moved off, that
// refuses the namespace's writes there (MoveNamespace); its value names the
// shard it moved to.
func movedKey(prefix, ns string) string { return prefix + "moved/" + ns }

// splitKey is the inverse of entryKey: bucket and key of an etcd key under
// prefix; ok false for a key that is not a bucket entry (the probe key,
// statistics, keys of a prefix nested under ours).
func splitKey(prefix string, k []byte) (bucket string, key []byte, ok bool) {
	if !bytes.HasPrefix(k, []byte(prefix)) {
		return "", nil, false
	}
	rest := k[len(prefix):]
	i := bytes.IndexByte(rest, '/')
	if i <= 0 {
		return "", nil, false
	}
	return string(rest[:i]), rest[i+1:], true
}

// Audit entries written through a cluster take no shared sequence number in
// etcd, so that concurrent writes (on one node's lanes or on several nodes)
// never collide on the next one. Each transaction writes its entries as
//
//	P audit/<id>.<i>
//
// with id 24 hex digits of randomness drawn for the transaction and i the
// entry's position in it (4 hex digits), and the entry's JSON without "seq"
// (registry.AuditWithoutSeq). Every node numbers an entry by where etcd
// committed it: seq = revision<<16 | i (auditSeq), the same on every node,
// increasing in commit order, and above the 8-byte sequence numbers of a
// seeded single node's log (Seed). A transaction holds far fewer than 2^16
// operations (RequiredTxnOps).
const auditIDLen = 24

// auditKey is the etcd key of the i-th audit entry of transaction id.
func auditKey(prefix, id string, i int) string {
	return fmt.Sprintf("%saudit/%s.%04x", prefix, id, i)
}

// newAuditID draws a transaction's audit id.
func newAuditID() string {
	var b [auditIDLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Shards' revisions are unrelated, so an entry of the shard at place p > 0
// of Config.Shards (its identifier writes) is numbered p<<56 | revision<<16
// | i: unique across shards, increasing in commit order within a shard
// (and so within a namespace, which one shard holds), not across shards.
//
// auditSeq is the sequence number of the audit entry stored under key (the
// part after "audit/") at revision rev of the shard at place shard; ok false
// for a key that is not of the form auditKey writes.
func auditSeq(key []byte, rev int64, shard int) (seq uint64, ok bool) {
	if len(key) != auditIDLen+5 || key[auditIDLen] != '.' || rev <= 0 || rev >= 1<<47 {
		return 0, false
	}
	if shard > 0 && (rev >= 1<<40 || shard >= 1<<7) {
		return 0, false
	}
	i, err := strconv.ParseUint(string(key[auditIDLen+1:]), 16, 16)
	if err != nil {
		return 0, false
	}
	return uint64(shard)<<56 | uint64(rev)<<16 | i, true
}
