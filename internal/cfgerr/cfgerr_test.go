package cfgerr

import (
	"errors"
	"testing"
)

func TestError(t *testing.T) {
	sentinel := errors.New("pkg: invalid config")
	for _, tt := range []struct {
		name string
		err  *Error
		want string
	}{
		{"with value", &Error{Pkg: "cache", Field: "Shards", Value: "3", Reason: "must be a power of two", Err: sentinel},
			`cache: invalid Config.Shards "3": must be a power of two`},
		{"without value", &Error{Pkg: "resolver", Field: "Cache", Reason: "required", Err: sentinel},
			"resolver: invalid Config.Cache: required"},
		{"required", Required("write", "Registry", sentinel), "write: invalid Config.Registry: required"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: Error() = %q, want %q", tt.name, got, tt.want)
		}
		if !errors.Is(tt.err, sentinel) {
			t.Errorf("%s: errors.Is(err, sentinel) = false", tt.name)
		}
		var ce *Error
		if !errors.As(error(tt.err), &ce) || ce.Field != tt.err.Field {
			t.Errorf("%s: errors.As did not find the field", tt.name)
		}
	}
}
