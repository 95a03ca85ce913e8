package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/keystore/storetest"
)

const forgetfulEnv = "IDEMPAY_STORETEST_FORGETFUL_CHILD"

// A store whose crash keeps everything passes the durability claims.
func TestRunDurabilityPassesAStoreThatKeepsEverything(t *testing.T) {
	storetest.RunDurability(t, func(t *testing.T) storetest.Crashable {
		s := memstore.New()
		return storetest.Crashable{Store: s, Crash: func(*testing.T) idempay.KeyStore { return s }}
	})
}

// TestForgetfulStoreChild runs the durability claims against a store that
// loses everything in a crash (memstore, restarted); only as the child of
// TestRunDurabilityCatchesLoss, which expects every case to fail.
func TestForgetfulStoreChild(t *testing.T) {
	if os.Getenv(forgetfulEnv) == "" {
		t.Skip("run by TestRunDurabilityCatchesLoss")
	}
	storetest.RunDurability(t, func(t *testing.T) storetest.Crashable {
		return storetest.Crashable{Store: memstore.New(), Crash: func(*testing.T) idempay.KeyStore { return memstore.New() }}
	})
}

// The durability claims catch a store that loses acknowledged writes: each
// case fails against one that forgets everything in a crash.
func TestRunDurabilityCatchesLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestForgetfulStoreChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), forgetfulEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the durability claims passed a store that forgets everything:\n%s", out)
	}
	for _, name := range []string{"a_Reserve_survives_a_crash", "a_renewal_survives_a_crash",
		"a_durable_failed_close_survives_a_crash", "a_durable_release_with_a_result_survives_a_crash"} {
		if !strings.Contains(string(out), "--- FAIL: TestForgetfulStoreChild/Durability/"+name) {
			t.Errorf("case %s did not fail against a store that forgets everything", name)
		}
	}
	if !strings.Contains(string(out), "rule: ") {
		t.Error("a failing case does not state its rule")
	}
}
