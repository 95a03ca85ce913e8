package storetest_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/storetest"
)

// childEnv, when set, makes TestDefectiveStoresChild run the suite against
// every defective store; the parent test reads its verdicts.
const childEnv = "IDEMPAY_STORETEST_DEFECTS_CHILD"

// TestRunPassesCorrectStore runs the suite against faultyStore without a
// defect: the suite must not fail a correct store, or its failures would
// mean nothing.
func TestRunPassesCorrectStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) idempay.KeyStore { return newFaultyStore("") })
}

// TestDefectiveStoresChild is the child half of TestRunCatchesDefects. It
// runs only in a subprocess, since its subtests are meant to fail, and a
// failing *testing.T cannot be caught in-process. The defects run in
// parallel: most of the suite's time is spent sleeping.
func TestDefectiveStoresChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as the child of TestRunCatchesDefects")
	}
	for _, d := range slices.Sorted(maps.Keys(defects)) {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) idempay.KeyStore { return newFaultyStore(d) })
		})
	}
}

// TestRunCatchesDefects proves the suite can fail: it runs Run against each
// defective store in a child process and checks that the subtests expected
// to catch the defect failed there, and that the failing case logged its
// rule.
func TestRunCatchesDefects(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDefectiveStoresChild$", "-test.v", "-test.count=1", "-test.parallel=8")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child run of the suite against defective stores passed; want failures. Output:\n%s", out)
	}
	if ctx.Err() != nil {
		t.Fatalf("the child run timed out. Output:\n%s", out)
	}

	failed := map[string]bool{}
	for _, m := range regexp.MustCompile(`--- FAIL: TestDefectiveStoresChild/(\S+)`).FindAllSubmatch(out, -1) {
		failed[string(m[1])] = true
	}
	for _, d := range slices.Sorted(maps.Keys(defects)) {
		if !failed[d] {
			t.Errorf("defect %q: the suite passed a store with it", d)
			continue
		}
		for _, c := range defects[d] {
			if !failed[d+"/"+c] {
				t.Errorf("defect %q: subtest %s did not fail", d, c)
			}
		}
	}
	if want := []byte("rule: Reserve on an intent whose record another owner holds returns the stored record unchanged"); !bytes.Contains(out, want) {
		t.Errorf("the output of a failing case does not state its rule %q", want)
	}
	if t.Failed() {
		var lines []string
		for l := range strings.Lines(string(out)) {
			if strings.Contains(l, "--- FAIL") {
				lines = append(lines, l)
			}
		}
		t.Logf("failures reported by the child:\n%s", strings.Join(lines, ""))
	}
}
