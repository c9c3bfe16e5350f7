package refusal

import (
	"errors"
	"testing"
)

func TestError(t *testing.T) {
	kind := errors.New("write: identifier exists")
	var err error = &Error{Kind: kind, Detail: "21.T12345/DMO/X is taken"}
	if got, want := err.Error(), "write: identifier exists: 21.T12345/DMO/X is taken"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, kind) {
		t.Error("errors.Is(err, Kind) = false")
	}
	var re *Error
	if !errors.As(err, &re) || re.Detail != "21.T12345/DMO/X is taken" {
		t.Errorf("errors.As = %v", re)
	}
}
