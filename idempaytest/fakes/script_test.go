package fakes_test

import (
	"testing"

	"github.com/idempay/idempay/idempaytest/fakes"
)

// Scripts by key win over scripts by intent, which win over the next-request
// queue, which wins over chance.
func TestScriptPrecedence(t *testing.T) {
	in := fakes.NewScript(fakes.Rates{Post: 1}, 1)
	in.FailNext(fakes.Mid)
	in.Fail("o1", fakes.Unavailable)
	in.FailKey("k1", fakes.Pre, fakes.None)
	for i, want := range []fakes.Fault{fakes.Pre, fakes.None, fakes.Unavailable, fakes.Mid, fakes.Post} {
		if got := in.Draw("k1", "o1"); got != want {
			t.Fatalf("draw %d = %v, want %v", i, got, want)
		}
	}
}

// The same seed and the same order of requests give the same faults.
func TestScriptDeterministic(t *testing.T) {
	r := fakes.Rates{Pre: .1, Mid: .1, Post: .1, Unavailable: .05}
	a, b := fakes.NewScript(r, 7), fakes.NewScript(r, 7)
	seen := map[fakes.Fault]int{}
	for i := range 2000 {
		fa, fb := a.Draw("", ""), b.Draw("", "")
		if fa != fb {
			t.Fatalf("draw %d differs: %v vs %v", i, fa, fb)
		}
		seen[fa]++
	}
	for _, f := range []fakes.Fault{fakes.None, fakes.Pre, fakes.Mid, fakes.Post, fakes.Unavailable} {
		if seen[f] == 0 {
			t.Errorf("fault %v never drawn in 2000 draws", f)
		}
	}
	if seen[fakes.Internal] != 0 {
		t.Errorf("fakes.Internal drawn %d times at rate 0", seen[fakes.Internal])
	}
}

// TestScriptSeedAndRates: the same seed gives the same faults, another
// seed others, and the rates are honoured.
func TestScriptSeedAndRates(t *testing.T) {
	rates := fakes.Rates{Pre: 0.1, Unavailable: 0.1, Mid: 0.1, Internal: 0.1, Post: 0.1}
	draws := func(seed uint64) []fakes.Fault {
		in := fakes.NewScript(rates, seed)
		out := make([]fakes.Fault, 10000)
		for i := range out {
			out[i] = in.Draw("k", "o")
		}
		return out
	}
	a, b, other := draws(7), draws(7), draws(8)
	same := true
	counts := map[fakes.Fault]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 diverged at draw %d", i)
		}
		same = same && a[i] == other[i]
		counts[a[i]]++
	}
	if same {
		t.Error("seeds 7 and 8 gave the same faults")
	}
	for f := fakes.Pre; f <= fakes.Post; f++ {
		if n := counts[f]; n < 800 || n > 1200 {
			t.Errorf("%v drawn %d times in 10000 at rate 0.1", f, n)
		}
	}
}

func TestScriptSetRates(t *testing.T) {
	in := fakes.NewScript(fakes.Rates{Post: 1}, 1)
	if err := in.SetFaultRates(fakes.Rates{Post: 2}); err == nil {
		t.Fatal("invalid rates accepted")
	}
	if err := in.SetFaultRates(fakes.Rates{}); err != nil {
		t.Fatal(err)
	}
	if f := in.Draw("k", "i"); f != fakes.None {
		t.Fatalf("faults off, drew %v", f)
	}
}
