package handlev

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCheckChar(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want byte
	}{
		{"spec vector TBR", "TBR", '1'},
		{"spec vector B3739U6CR", "B3739U6CR", 'K'},
		{"lower case", "b3739u6cr", 'K'},
		{"dashes skipped", "B373-9U6C-R", 'K'},
		{"minted example", "K7Q4XJ29MPA", CheckChar("K7Q-4XJ2-9MPA")},
		{"empty", "", '1'},
		{"space", "B3 7", 0},
		{"non-ascii", "é", 0},
		{"slash", "A/B", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckChar(tt.s); got != tt.want {
				t.Errorf("CheckChar(%q) = %q; want %q", tt.s, got, tt.want)
			}
		})
	}
}

// TestCheckCharDefinition checks CheckChar against ISO 7064's defining property
// for the hybrid system: running the recursion over s and its check character
// leaves the state at 1.
func TestCheckCharDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + r.IntN(20)
		b := make([]byte, n)
		for i := range b {
			b[i] = checkAlphabet[r.IntN(36)]
		}
		s := string(b)
		c := CheckChar(s)
		// ISO 7064 hybrid check: run the recursion over s and then its check
		// character; the last sum (p + c) mod 36 must be 1.
		p, x := 36, 0
		for _, ch := range []byte(s + string(c)) {
			x = (p + checkValue(ch)) % 36
			if x == 0 {
				x = 36
			}
			p = x * 2 % 37
		}
		if x != 1 {
			t.Fatalf("CheckChar(%q) = %q leaves sum %d; want 1", s, c, x)
		}
	}
}

func TestMint(t *testing.T) {
	r := rand.NewChaCha8([32]byte{1})
	for _, ns := range []string{"K7Q", "k7q", "A", "ABCDEFGHIJKLMNOP"} {
		id, err := Mint(ns, r)
		if err != nil {
			t.Fatalf("Mint(%q) error %v", ns, err)
		}
		if len(id) != 11 || id[4] != '-' || id[9] != '-' {
			t.Fatalf("Mint(%q) = %q; want XXXX-XXXX-C", ns, id)
		}
		body := id[:4] + id[5:9]
		for i := 0; i < len(body); i++ {
			if !strings.ContainsRune(crockford, rune(body[i])) {
				t.Errorf("Mint(%q) = %q: %q is not Crockford base32", ns, id, body[i])
			}
		}
		if want := CheckChar(strings.ToUpper(ns) + body); id[10] != want {
			t.Errorf("Mint(%q) = %q; check char want %q", ns, id, want)
		}
		if looks, valid := ValidGenerated([]byte(ns), []byte(id)); !looks || !valid {
			t.Errorf("ValidGenerated(%q, %q) = %v, %v; want true, true", ns, id, looks, valid)
		}
	}
}

func TestMintDeterministic(t *testing.T) {
	// bytes 0..7 → Crockford 0..7; check over "K7Q01234567".
	id, err := Mint("K7Q", bytes.NewReader([]byte{0, 1, 2, 3, 4, 5, 6, 7}))
	want := "0123-4567-" + string(CheckChar("K7Q01234567"))
	if err != nil || id != want {
		t.Errorf("Mint(K7Q, 0..7) = %q, %v; want %q", id, err, want)
	}
	// The high bits are dropped: 0xFF → 31 → 'Z'.
	id, err = Mint("K7Q", bytes.NewReader(bytes.Repeat([]byte{0xff}, 8)))
	if err != nil || id[:9] != "ZZZZ-ZZZZ" {
		t.Errorf("Mint(K7Q, 0xFF…) = %q, %v; want ZZZZ-ZZZZ-C", id, err)
	}
}

func TestMintCryptoRand(t *testing.T) {
	a, err1 := Mint("K7Q", nil)
	b, err2 := Mint("K7Q", nil)
	if err1 != nil || err2 != nil || a == b {
		t.Errorf("Mint(K7Q, nil) twice = %q, %v and %q, %v; want two different ids", a, err1, b, err2)
	}
}

func TestMintErrors(t *testing.T) {
	tests := []struct {
		name string
		ns   string
		rnd  io.Reader
		err  error
	}{
		{"empty ns", "", nil, ErrBadNamespace},
		{"dash in ns", "K-7Q", nil, ErrBadNamespace},
		{"long ns", strings.Repeat("A", 17), nil, ErrBadNamespace},
		{"short reader", "K7Q", bytes.NewReader([]byte{1, 2, 3}), io.ErrUnexpectedEOF},
		{"empty reader", "K7Q", bytes.NewReader(nil), io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := Mint(tt.ns, tt.rnd)
			if !errors.Is(err, tt.err) || id != "" {
				t.Errorf("Mint(%q) = %q, %v; want error %v", tt.ns, id, err, tt.err)
			}
		})
	}
}

func TestValidGenerated(t *testing.T) {
	good := "0123-4567-" + string(CheckChar("K7Q01234567"))
	badCheck := good[:10] + string(checkAlphabet[(strings.IndexByte(checkAlphabet, good[10])+1)%36])
	tests := []struct {
		name         string
		ns, id       string
		looks, valid bool
	}{
		{"good", "K7Q", good, true, true},
		{"lower case", "k7q", strings.ToLower(good), true, true},
		{"no dashes", "K7Q", strings.ReplaceAll(good, "-", ""), true, true},
		{"odd dashes", "K-7Q", "0-1-2-3-4-5-6-7-" + good[10:], true, true},
		{"spec vector", "B37", "39U6-CR--K", false, false}, // U is not Crockford
		{"wrong check", "K7Q", badCheck, true, false},
		{"wrong ns", "K7R", good, true, false},
		{"ns with bad byte", "K7Q!", good, true, false},
		{"too short", "K7Q", good[:9], false, false},
		{"too long", "K7Q", good + "0", false, false},
		{"I in body", "K7Q", "I123-4567-0", false, false},
		{"L in body", "K7Q", "L123-4567-0", false, false},
		{"O in body", "K7Q", "O123-4567-0", false, false},
		{"u in body", "K7Q", "u123-4567-0", false, false},
		{"punctuation in check", "K7Q", "0123-4567-.", false, false},
		{"custom id", "K7Q", "sample-1", false, false},
		{"custom id of generated shape", "K7Q", "my-dataset", true, false},
		{"empty", "K7Q", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			looks, valid := ValidGenerated([]byte(tt.ns), []byte(tt.id))
			if looks != tt.looks || valid != tt.valid {
				t.Errorf("ValidGenerated(%q, %q) = %v, %v; want %v, %v", tt.ns, tt.id, looks, valid, tt.looks, tt.valid)
			}
		})
	}
	// A check character outside Crockford's alphabet (I, L, O, U) is legal.
	for _, c := range "ILOU" {
		for body := 0; body < 5000; body++ {
			b := []byte{crockford[body%32], crockford[body/32%32], crockford[body/1024%32], '0', '0', '0', '0', '0'}
			if CheckChar("K7Q"+string(b)) == byte(c) {
				id := string(b) + string(c)
				if looks, valid := ValidGenerated([]byte("K7Q"), []byte(id)); !looks || !valid {
					t.Errorf("ValidGenerated(K7Q, %q) = %v, %v; want true, true", id, looks, valid)
				}
				break
			}
		}
	}
}

// TestCheckDetectsSubstitution: every single-character substitution in NS or ID
// of a minted id (check character included) is detected (docs/product.md §2).
func TestCheckDetectsSubstitution(t *testing.T) {
	r := rand.NewChaCha8([32]byte{42})
	n := 3000
	if testing.Short() {
		n = 300
	}
	var transposed, transposedMissed int
	for i := range n {
		ns := "K7Q"
		switch i % 3 {
		case 1:
			var err error
			if ns, err = NewNamespace(r); err != nil {
				t.Fatal(err)
			}
		case 2:
			ns = "ABCDEFGHIJKLMN"[:1+i%14]
		}
		id, err := Mint(ns, r)
		if err != nil {
			t.Fatal(err)
		}
		nsb, idb := []byte(ns), []byte(id)
		for _, buf := range [][]byte{nsb, idb} {
			for pos := range buf {
				orig := buf[pos]
				if orig == '-' {
					continue
				}
				for k := 0; k < len(checkAlphabet); k++ {
					if checkAlphabet[k] == orig {
						continue
					}
					buf[pos] = checkAlphabet[k]
					if _, valid := ValidGenerated(nsb, idb); valid {
						t.Fatalf("ValidGenerated(%q, %q) = valid after substituting %q; mint was %q/%q", nsb, idb, orig, ns, id)
					}
				}
				buf[pos] = orig
			}
		}
		// Adjacent transpositions (reported, not required by ISO 7064).
		s := []byte(ns + id[:4] + id[5:9] + id[10:])
		for p := 0; p+1 < len(s); p++ {
			if s[p] == s[p+1] {
				continue
			}
			s[p], s[p+1] = s[p+1], s[p]
			transposed++
			if CheckChar(string(s[:len(s)-1])) == s[len(s)-1] {
				transposedMissed++
			}
			s[p], s[p+1] = s[p+1], s[p]
		}
	}
	// MOD 37,36 catches nearly all adjacent transpositions but not every one.
	t.Logf("adjacent transpositions missed: %d of %d", transposedMissed, transposed)
	if transposedMissed*100 > transposed {
		t.Errorf("adjacent transpositions missed: %d of %d; want under 1%%", transposedMissed, transposed)
	}
}

func TestNewNamespace(t *testing.T) {
	r := rand.NewChaCha8([32]byte{7})
	seen := map[string]bool{}
	for range 200 {
		ns, err := NewNamespace(r)
		if err != nil || len(ns) != NamespaceLen || ValidNamespace(ns) != nil {
			t.Fatalf("NewNamespace() = %q, %v; want 3 valid characters", ns, err)
		}
		for i := 0; i < len(ns); i++ {
			if !strings.ContainsRune(crockford, rune(ns[i])) {
				t.Fatalf("NewNamespace() = %q: %q is not Crockford base32", ns, ns[i])
			}
		}
		seen[ns] = true
	}
	if len(seen) < 150 {
		t.Errorf("NewNamespace gave only %d distinct values in 200 draws", len(seen))
	}
	if ns, err := NewNamespace(nil); err != nil || len(ns) != 3 {
		t.Errorf("NewNamespace(nil) = %q, %v; want 3 characters", ns, err)
	}
	if ns, err := NewNamespace(bytes.NewReader([]byte{1})); err == nil {
		t.Errorf("NewNamespace(short reader) = %q, nil; want an error", ns)
	}
}

func TestValidNamespace(t *testing.T) {
	tests := []struct {
		ns string
		ok bool
	}{
		{"K7Q", true},
		{"A", true},
		{"0", true},
		{"ILOU", true}, // operator-chosen: any of 0-9A-Z
		{"ABCDEFGHIJKLMNOP", true},
		{"", false},
		{"ABCDEFGHIJKLMNOPQ", false},
		{"k7q", false},
		{"K-7Q", false},
		{"K7Q/", false},
		{"K 7", false},
		{"KÄQ", false},
	}
	for _, tt := range tests {
		err := ValidNamespace(tt.ns)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrBadNamespace)) {
			t.Errorf("ValidNamespace(%q) = %v; want ok=%v", tt.ns, err, tt.ok)
		}
	}
}

func TestValidCustomID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"dataset-2024", true},
		{"Sample.1/part-2/v3", true},
		{"0", true},
		{"a..b", true},
		{"a/.b/c", true},
		{strings.Repeat("x", 36), true},
		{"", false},
		{strings.Repeat("x", 37), false},
		{"-a", false},
		{".a", false},
		{"/a", false},
		{"a//b", false},
		{"a/", false},
		{"a.", false},
		{"a b", false},
		{"a_b", false},
		{"a%2Fb", false},
		{"é", false},
		{"a/../b", false},
		{"a/./b", false},
	}
	for _, tt := range tests {
		err := ValidCustomID(tt.id)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrBadCustomID)) {
			t.Errorf("ValidCustomID(%q) = %v; want ok=%v", tt.id, err, tt.ok)
		}
	}
}

func TestValidGeneratedAllocs(t *testing.T) {
	ns, id := []byte("K7Q"), []byte("0123-4567-"+string(CheckChar("K7Q01234567")))
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := ValidGenerated(ns, id); !ok {
			t.Fatal("not valid")
		}
	})
	if allocs != 0 {
		t.Errorf("ValidGenerated allocs = %v; want 0", allocs)
	}
}
