package fakes_test

import (
	"math"
	"testing"
	"time"

	"github.com/idempay/idempay/idempaytest/fakes"
)

func TestRatesValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    fakes.Rates
		ok   bool
	}{
		{"zero", fakes.Rates{}, true},
		{"the issue's mix", fakes.Rates{Pre: .1, Mid: .1, Post: .1, Unavailable: .05}, true},
		{"all post", fakes.Rates{Post: 1}, true},
		{"negative", fakes.Rates{Pre: -0.1}, false},
		{"above one", fakes.Rates{Mid: 1.5}, false},
		{"sum above one", fakes.Rates{Pre: .6, Post: .6}, false},
		{"NaN", fakes.Rates{Internal: math.NaN()}, false},
	} {
		if err := tc.r.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// The cumulative pick gives each fault its own slice of [0, 1).
func TestRatesPick(t *testing.T) {
	r := fakes.Rates{Pre: .1, Unavailable: .1, Mid: .1, Internal: .1, Post: .1}
	for u, want := range map[float64]fakes.Fault{0: fakes.Pre, .15: fakes.Unavailable, .25: fakes.Mid,
		.35: fakes.Internal, .45: fakes.Post, .5: fakes.None, .99: fakes.None} {
		if got := r.Pick(u); got != want {
			t.Errorf("Pick(%v) = %v, want %v", u, got, want)
		}
	}
	if !(fakes.Rates{}).Zero() || r.Zero() {
		t.Error("Zero")
	}
}

func TestFaultString(t *testing.T) {
	if fakes.Post.String() != "post" || fakes.None.String() != "none" || fakes.Fault(42).String() != "fault(42)" {
		t.Errorf("names: %q %q %q", fakes.Post, fakes.None, fakes.Fault(42))
	}
}

func TestClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := fakes.NewClock(start)
	c.Advance(time.Hour)
	if got := c.Now(); !got.Equal(start.Add(time.Hour)) {
		t.Fatalf("Now() = %v", got)
	}
	c.Set(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("after Set: %v", got)
	}
	var zero fakes.Clock
	if !zero.Now().IsZero() {
		t.Fatal("the zero Clock reads the zero time")
	}
}
