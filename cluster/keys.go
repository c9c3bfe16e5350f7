package cluster

import (
	"bytes"
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
