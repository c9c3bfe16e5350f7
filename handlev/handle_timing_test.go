package handlev

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkDecodePath(b *testing.B) {
	for _, bc := range []struct{ name, raw string }{
		{"plain", "21.T12345/svc/K7Q/4XJ2-9MPA-C"},
		{"escaped", "hdl:21.T12345%2Fsvc%2FK7Q%2F4XJ2-9MPA-C%C3%A9"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			raw := []byte(bc.raw)
			dst := make([]byte, 0, MaxHandleLen+maxSchemeLen)
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodePath(dst[:0], raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendKey(b *testing.B) {
	n := testNamer(b)
	for _, bc := range []struct{ name, h string }{
		{"full", "21.t12345/svc/k7q/4xj2-9mpa-c"},
		{"short", "21.T12345/K7Q/4XJ2-9MPA-C"},
		{"other", "10.1000/182"},
		{"slashless", "abc"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := []byte(bc.h)
			dst := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := n.AppendKey(dst[:0], h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendKeyParallel(b *testing.B) {
	n := testNamer(b)
	h := []byte("21.t12345/svc/k7q/4xj2-9mpa-c")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		dst := make([]byte, 0, 64)
		for pb.Next() {
			if _, _, err := n.AppendKey(dst[:0], h); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendAltKey(b *testing.B) {
	n := testNamer(b)
	key := []byte("21.T12345/K7Q/4XJ29MPAC")
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := n.AppendAltKey(dst[:0], key); !ok {
			b.Fatal("no alt key")
		}
	}
}

func BenchmarkMint(b *testing.B) {
	r := rand.NewChaCha8([32]byte{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Mint("K7Q", r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidGenerated(b *testing.B) {
	ns, id := []byte("K7Q"), []byte("0123-4567-"+string(CheckChar("K7Q01234567")))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ValidGenerated(ns, id); !ok {
			b.Fatal("not valid")
		}
	}
}
