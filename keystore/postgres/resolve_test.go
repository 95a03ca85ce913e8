package postgres

import (
	"testing"

	"github.com/idempay/idempay"
)

// TestResolveCommitsWithoutFlush checks the mechanism behind the default
// relaxed Resolve: inside the statement synchronous_commit is off (so its
// commit does not wait for the WAL flush), and afterwards the connection is
// back to its own setting, so that the next Reserve on the same pooled
// connection still commits durably.
func TestResolveCommitsWithoutFlush(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []Option
		inside string
	}{
		{"default", nil, "off"},
		{"WithDurableResolve", []Option{WithDurableResolve()}, "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := poolConfig(t)
			cfg.MaxConns = 1 // one connection: what leaks would show below
			s := openStoreIn(t, newPool(t, cfg), tc.opts...)
			ctx := t.Context()
			r := record("ns", "order-1")
			if _, err := s.Reserve(ctx, r); err != nil {
				t.Fatal(err)
			}
			conn, err := s.pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Release()
			var before, inside, after string
			if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&before); err != nil {
				t.Fatal(err)
			}
			if before != "on" {
				t.Skipf("server default synchronous_commit = %q; the test needs on", before)
			}
			// The store's own statement, made to report the setting it
			// committed under.
			err = conn.QueryRow(ctx, s.q.resolve+` RETURNING current_setting('synchronous_commit')`,
				"ns", "order-1", r.Key, string(idempay.StateSucceeded), at, "", false, nil, "").Scan(&inside)
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&after); err != nil {
				t.Fatal(err)
			}
			if inside != tc.inside {
				t.Errorf("synchronous_commit inside Resolve = %q; want %q", inside, tc.inside)
			}
			if after != before {
				t.Errorf("synchronous_commit after Resolve = %q; want the session's %q restored", after, before)
			}
		})
	}
}
