package handlev

import (
	"encoding/json"
	"testing"
)

// Benchmarks of the codecs. The read path pre-encodes once per cache entry, so the
// encoders' numbers bound the cost of a cache miss; the decoders run on store
// loads, imports and native-protocol requests.

func benchRecord(b *testing.B) []Value {
	b.Helper()
	return pid4catValues(b)
}

func BenchmarkAppendValueJSON(b *testing.B) {
	vs := benchRecord(b)
	v := &vs[5] // RESOURCE: a JSON text value with many escapes
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(AppendValueJSON(nil, v))))
	for b.Loop() {
		dst = AppendValueJSON(dst[:0], v)
	}
}

func BenchmarkAppendRecordJSON(b *testing.B) {
	vs := benchRecord(b)
	dst := make([]byte, 0, 8192)
	b.ReportAllocs()
	b.SetBytes(int64(len(AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", vs))))
	for b.Loop() {
		dst = AppendRecordJSON(dst[:0], "21.T11978/TEST/KBKA-BEM9", vs)
	}
}

func BenchmarkAppendRecordJSONParallel(b *testing.B) {
	vs := benchRecord(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		dst := make([]byte, 0, 8192)
		for pb.Next() {
			dst = AppendRecordJSON(dst[:0], "21.T11978/TEST/KBKA-BEM9", vs)
		}
	})
}

func BenchmarkAppendPrettyJSON(b *testing.B) {
	compact := AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", benchRecord(b))
	dst := make([]byte, 0, 16384)
	b.ReportAllocs()
	b.SetBytes(int64(len(compact)))
	for b.Loop() {
		dst = AppendPrettyJSON(dst[:0], compact)
	}
}

func BenchmarkDecodeRecordJSON(b *testing.B) {
	in := AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", benchRecord(b))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := DecodeRecordJSON(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRecordJSONStd is BenchmarkDecodeRecordJSON through the
// encoding/json path alone: what the fast path saves the import path.
func BenchmarkDecodeRecordJSONStd(b *testing.B) {
	in := AppendRecordJSON(nil, "21.T11978/TEST/KBKA-BEM9", benchRecord(b))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := decodeRecordJSONStd(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadResource: a pid4cat RESOURCE value through ReadResource, and
// through encoding/json into the same fields for comparison.
func BenchmarkReadResource(b *testing.B) {
	data := []byte(`{"label":"Resource label","description":"Resource description","resource_category":"SAMPLE","representation_variants":[{"variant_url":"https://example.org/resource","media_type":"text/turtle","encoding_format":"UTF-8","size":12345},{"variant_url":"https://example.org/resource.json","media_type":"application/ld+json","encoding_format":"UTF-8","size":23456}]}`)
	b.Run("ReadResource", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		var arena []byte
		for b.Loop() {
			r, a, ok := ReadResource(data, arena[:0])
			if !ok || len(r.Variants) != 2 {
				b.Fatal(ok)
			}
			arena = a
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var r struct {
				Label       string `json:"label"`
				Description string `json:"description"`
				Category    string `json:"resource_category"`
				Variants    []struct {
					URL       string `json:"variant_url"`
					MediaType string `json:"media_type"`
				} `json:"representation_variants"`
			}
			if err := json.Unmarshal(data, &r); err != nil || len(r.Variants) != 2 {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendValues(b *testing.B) {
	vs := benchRecord(b)
	dst := make([]byte, 0, 8192)
	b.ReportAllocs()
	b.SetBytes(int64(len(AppendValues(nil, vs))))
	for b.Loop() {
		dst = AppendValues(dst[:0], vs)
	}
}

func BenchmarkDecodeValues(b *testing.B) {
	in := AppendValues(nil, benchRecord(b))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := decodeValuesOwned(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeValue(b *testing.B) {
	in := codecHex(b, vectorValueHex)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeValue(in); err != nil {
			b.Fatal(err)
		}
	}
}
