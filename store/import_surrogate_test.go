package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"pidnode/handlev"
)

// An import line with an escaped lone surrogate is refused, naming the line,
// instead of being stored with U+FFFD in its place.
func TestImportRefusesLoneSurrogate(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "s.db"), true)
	in := `{"handle":"21.1/A","values":[{"index":1,"type":"URL","data":"https://e.org/"}]}` + "\n" +
		`{"handle":"21.1/B","values":[{"index":1,"type":"DESC","data":{"format":"string","value":"x\ud800"}}]}` + "\n"
	_, err := db.Import(strings.NewReader(in), sampleKey)
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Line != 2 || !errors.Is(err, handlev.ErrLoneSurrogate) {
		t.Fatalf("Import = %v, want an ImportError on line 2 wrapping ErrLoneSurrogate", err)
	}
	if _, ok, _ := db.Get("21.1/B"); ok {
		t.Error("the record was stored")
	}
}
