package testenv

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skipf and Fatalf instead of
// stopping the test, so the decision Require makes can be checked.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = format
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
}

func TestRequireSkipsLocallyAndFailsInCI(t *testing.T) {
	down := func(context.Context) error { return errors.New("connection refused") }
	up := func(context.Context) error { return nil }

	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Require(r, "PostgreSQL", down)
	if r.skipped == "" || r.failed != "" {
		t.Errorf("without CI, a service that does not answer: skipped %q failed %q; want a skip", r.skipped, r.failed)
	}

	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Require(r, "PostgreSQL", down)
	if r.failed == "" || !strings.HasPrefix(r.failed, "CI=true") {
		t.Errorf("with CI=true, a service that does not answer: failed %q; want a failure naming CI", r.failed)
	}

	r = &recorder{TB: t}
	Require(r, "PostgreSQL", up)
	if r.failed != "" || r.skipped != "" {
		t.Errorf("a service that answers: skipped %q failed %q; want neither", r.skipped, r.failed)
	}
}

func TestRequireBoundsTheProbe(t *testing.T) {
	r := &recorder{TB: t}
	t.Setenv("CI", "")
	Require(r, "hung service", func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("probe context has no deadline")
		}
		return nil
	})
}

func TestUniqueName(t *testing.T) {
	a, b := UniqueName("p_"), UniqueName("p_")
	if a == b || !strings.HasPrefix(a, "p_") || len(a) != len("p_")+12 {
		t.Errorf("UniqueName = %q, %q; want distinct, prefixed, 12 hex digits", a, b)
	}
}
