package access

import (
	"errors"
	"testing"
	"time"

	"pidnode/registry"
)

// TestAdmission: suspension, the key's rate, the SNAA's rate over all its
// keys, maintenance for writes only, and the per-address limit, each
// refused with its sentinel and, where a retry helps, a RetryAfter.
func TestAdmission(t *testing.T) {
	keys, _ := newKeys(t)
	now := time.Unix(1_700_000_000, 0)
	a := NewAdmission(AdmissionConfig{Keys: keys, RateLimit: 1, RateBurst: 2, SNAARateLimit: 1, SNAARateBurst: 3, Now: func() time.Time { return now }})
	sn := registry.SNAA{ID: "snaa_a"}
	k1, k2 := registry.Key{ID: "key_1", Hash: "h1"}, registry.Key{ID: "key_2", Hash: "h2"}

	if err := a.Admit(k1, registry.SNAA{ID: "snaa_s", Suspended: true}, false, false); !errors.Is(err, ErrSuspended) {
		t.Errorf("suspended SNAA: %v, want ErrSuspended", err)
	}
	for i := range 2 {
		if err := a.Admit(k1, sn, false, false); err != nil {
			t.Fatalf("request %d within the key's burst: %v", i+1, err)
		}
	}
	var re *Error
	if err := a.Admit(k1, sn, false, false); !errors.As(err, &re) || re.Kind != ErrRateLimited || re.RetryAfter < time.Second {
		t.Errorf("third request of the key: %v, want ErrRateLimited with RetryAfter", err)
	}
	if err := a.Admit(k2, sn, false, false); err != nil {
		t.Errorf("the SNAA's other key, third of the SNAA: %v", err)
	}
	if err := a.Admit(k2, sn, false, false); !errors.Is(err, ErrRateLimited) {
		t.Errorf("fourth request of the SNAA: %v, want ErrRateLimited", err)
	}
	if all, key, snaa := a.Refusals(); all != 2 || key != 1 || snaa != 1 {
		t.Errorf("Refusals() = %d, %d, %d; want 2, 1, 1", all, key, snaa)
	}
	// A bulk is charged later, by its items: admitting it costs nothing.
	now = now.Add(time.Hour)
	a.SetReadOnly(true)
	if err := a.Admit(k1, sn, false, true); err != nil {
		t.Errorf("read in maintenance: %v", err)
	}
	if err := a.Admit(k1, sn, true, true); !errors.As(err, &re) || re.Kind != ErrMaintenance || re.RetryAfter != time.Minute {
		t.Errorf("write in maintenance: %v, want ErrMaintenance retrying after a minute", err)
	}
	a.SetReadOnly(false)
	// A bulk of more items than the burst passes on a full bucket and
	// leaves the key in debt.
	if err := a.Charge(k1.ID, sn.ID, 3); err != nil {
		t.Errorf("a bulk of 3 on full buckets: %v", err)
	}
	if err := a.Admit(k1, sn, false, false); !errors.Is(err, ErrRateLimited) {
		t.Errorf("the key in debt: %v, want ErrRateLimited", err)
	}

	l := a.AddrLimit(1)
	if err := l.Take("192.0.2.1", "applications"); err != nil {
		t.Fatalf("first application: %v", err)
	}
	if err := l.Take("192.0.2.1", "applications"); !errors.As(err, &re) || re.Kind != ErrRateLimited || re.Detail == "" {
		t.Errorf("second application of the hour: %v, want ErrRateLimited", err)
	}
	if err := l.Take("192.0.2.2", "applications"); err != nil {
		t.Errorf("another address: %v", err)
	}
}
