package cluster

import "testing"

// BenchmarkEncodeValue is the compression each replicated write pays on the
// accepting node, per record.
func BenchmarkEncodeValue(b *testing.B) {
	v := pid4catRecord(b, "21.12345/ABC")
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			encodeValue(v)
		}
	})
}

// BenchmarkDecodeValue is the decompression every node pays per record it
// applies.
func BenchmarkDecodeValue(b *testing.B) {
	e := encodeValue(pid4catRecord(b, "21.12345/ABC"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := decodeValue(e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
