//go:build ignore

// Genformat1 writes format1.db, the store file of format 1 that
// TestMigrateFormat1 opens, with the filestore of commit 6d33e90 (the
// last one writing format 1). From a clone of the repository:
//
//	git worktree add /tmp/format1 6d33e90
//	cp keystore/filestore/testdata/genformat1.go /tmp/format1/
//	(cd /tmp/format1 && go run genformat1.go /tmp/format1.db)
//	cp /tmp/format1.db keystore/filestore/testdata/format1.db
//
// TestMigrateFormat1 knows what it writes.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
)

func main() {
	s, err := filestore.Open(os.Args[1], filestore.WithSweepInterval(0))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	day := func(d int) time.Time { return time.Date(2024, 3, d, 9, 0, 0, 123456000, time.UTC) }
	put := func(ns, id string, created time.Time, owner string, until time.Time) {
		_, err := s.Reserve(ctx, idempay.Record{Namespace: ns, IntentID: id, Key: "key-" + id, Fingerprint: "fp-" + id,
			State: idempay.StateOpen, CreatedAt: created, UpdatedAt: created, LeaseOwner: owner, LeaseUntil: until})
		if err != nil {
			log.Fatal(err)
		}
	}
	resolve := func(ns, id string, st idempay.State, ref, result string, at time.Time) {
		var res []byte
		if result != "" {
			res = []byte(result)
		}
		err := s.Resolve(ctx, idempay.Resolution{Namespace: ns, IntentID: id, Key: "key-" + id, State: st,
			ProviderRef: ref, Result: res, At: at})
		if err != nil {
			log.Fatal(err)
		}
	}
	const a, b = "stripe:acct_1", "omise:acct_2"
	far := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	put(a, "open-leased", day(1), "dead-host/1", far)
	put(a, "open-free", day(2), "", time.Time{})
	put(a, "pending-leased", day(3), "dead-host/2", far)
	resolve(a, "pending-leased", idempay.StatePending, "pi_3", `{"status":"requires_action"}`, day(4))
	put(a, "pending-leased", day(4), "dead-host/2", far) // claimed again, to settle it
	put(a, "succeeded-late", day(1), "dead-host/3", far)
	resolve(a, "succeeded-late", idempay.StateSucceeded, "pi_4", `{"status":"succeeded"}`, day(20))
	put(a, "failed-early", day(5), "dead-host/4", far)
	resolve(a, "failed-early", idempay.StateFailed, "", `{"decline":"card_declined"}`, day(5).Add(time.Minute))
	put(b, "open-leased", day(6), "dead-host/5", far)
	for i := range 40 {
		id := fmt.Sprintf("done-%02d", i)
		put(b, id, day(7).Add(time.Duration(i)*time.Hour), "", time.Time{})
		resolve(b, id, idempay.StateSucceeded, "chrg_"+id, "", day(8).Add(time.Duration(i)*time.Hour))
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
}
