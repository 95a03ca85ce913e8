package faults

import (
	"math"
	"testing"
)

func TestRatesValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Rates
		ok   bool
	}{
		{"zero", Rates{}, true},
		{"issue mix", Rates{Pre: .1, Mid: .1, Post: .1, Unavailable: .05}, true},
		{"all post", Rates{Post: 1}, true},
		{"negative", Rates{Pre: -0.1}, false},
		{"above one", Rates{Mid: 1.5}, false},
		{"sum above one", Rates{Pre: .6, Post: .6}, false},
		{"NaN", Rates{Internal: math.NaN()}, false},
	} {
		if err := tc.r.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// The cumulative pick gives each fault its own slice of [0, 1).
func TestRatesPick(t *testing.T) {
	r := Rates{Pre: .1, Unavailable: .1, Mid: .1, Internal: .1, Post: .1}
	for u, want := range map[float64]Fault{0: Pre, .15: Unavailable, .25: Mid, .35: Internal, .45: Post, .5: None, .99: None} {
		if got := r.pick(u); got != want {
			t.Errorf("pick(%v) = %v, want %v", u, got, want)
		}
	}
}

func TestFaultString(t *testing.T) {
	if Post.String() != "post" || Fault(42).String() != "fault(42)" {
		t.Errorf("names: %q %q", Post, Fault(42))
	}
}
