package cluster

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Values of replicated entries are stored in etcd compressed: a value is
// either a zstd frame (RFC 8878), recognised by its magic number, or the
// bucket's value as it is (every value written before compression, and
// values that compression would not shrink). Decoding happens where an
// entry is applied (applyKV), so the local bbolt file, `pidnode export` and
// everything else a node reads hold the values byte for byte as a single
// node writes them.
//
// Frames are compressed with zstdDict, a raw-content dictionary: records
// and audit entries as the admin API writes them, which every frame may
// refer to (bench/cmd/zstddict generates it: `make zstd-dict`). A frame
// names its dictionary by ID: a shipped dictionary must stay in the decoder
// for as long as values compressed with it may be in etcd, so a new one
// takes a new ID and is added beside it, never in its place.
//
//go:embed zstd.dict
var zstdDict []byte

// zstdDictID names zstdDict in each frame: in the range the zstd format
// leaves to private dictionaries (32768 and up), below 65536 so that it
// takes two bytes of the frame header.
const zstdDictID = 32769

// zstdMagic starts every zstd frame. No value a single node writes starts
// with it (records start with their format byte 1, JSON with '{', the
// other values are text, storage keys or small big-endian counts), and a
// new value that does is always stored compressed (encodeValue), so a
// value is a frame exactly when it starts with the magic.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxValueBytes bounds a decoded value: above the largest value any bucket
// holds (a record is at most 16 MiB as JSON, less in its binary encoding;
// the audit entry of an update holds two), so that a frame from etcd
// claiming more is refused rather than allocated.
const maxValueBytes = 64 << 20

// codecs are the one encoder and decoder of every node, built on first
// use; both are safe for concurrent use (EncodeAll and DecodeAll keep
// pools of their own state; the encoder's holds one state, which
// concurrent encodes wait for). They fail only on a damaged zstdDict, which
// every test of this package would show.
var codecs = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
	enc, err := zstd.NewWriter(nil,
		// With the dictionary, the better levels save a few per cent of
		// bytes for three to four times the CPU, which every write pays on
		// the accepting node (BenchmarkEncodeValue).
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderDictRaw(zstdDictID, zstdDict),
		// The frame checksum would guard what etcd's WAL checksums and
		// corruption checks already guard: 4 bytes per value saved.
		zstd.WithEncoderCRC(false),
		// The dictionary leaves few literals: coding them saves next to
		// nothing, and building their Huffman table was a third of the
		// encoder's time.
		zstd.WithNoEntropyCompression(true),
		zstd.WithLowerEncoderMem(true),
		// One encoder, not one per CPU: a node encodes in its commit
		// group (one at a time per shard), and each encode restores the
		// encoder's dictionary-primed match table (a few hundred KiB), so
		// encoders taken in turn keep none of it in the CPU's cache.
		zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(fmt.Sprintf("cluster: zstd encoder: %v", err))
	}
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderDictRaw(zstdDictID, zstdDict),
		zstd.WithDecoderMaxMemory(maxValueBytes),
		zstd.WithDecoderMaxWindow(maxValueBytes),
		zstd.WithDecoderConcurrency(0))
	if err != nil {
		panic(fmt.Sprintf("cluster: zstd decoder: %v", err))
	}
	return enc, dec
})

// encodeValue returns what etcd stores for the bucket value v: v
// compressed, or v itself when compression does not make it smaller and v
// cannot be mistaken for a frame. The result may share v's memory.
func encodeValue(v []byte) []byte {
	enc, _ := codecs()
	z := enc.EncodeAll(v, make([]byte, 0, len(v)/2+16))
	if len(z) < len(v) || bytes.HasPrefix(v, zstdMagic) {
		return z
	}
	return v
}

// decodeValue is the inverse of encodeValue: the bucket value of what etcd
// holds. Bytes from etcd are not trusted: a damaged frame, one compressed
// with a dictionary this node does not have or one that decodes to more
// than maxValueBytes is an error, never a panic. The result may share v's
// memory.
func decodeValue(v []byte) ([]byte, error) {
	if !bytes.HasPrefix(v, zstdMagic) {
		return v, nil
	}
	_, dec := codecs()
	out, err := dec.DecodeAll(v, nil)
	if err != nil {
		return nil, fmt.Errorf("decompressing the value: %w", err)
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}
