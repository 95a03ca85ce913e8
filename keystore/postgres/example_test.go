package postgres_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idempay/idempay/keystore/postgres"
)

// A store on the application's own pool, in its own schema. New creates
// the table on first use; every instance may call it at start-up.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal:5432/payments")
	if err != nil {
		panic(err)
	}
	defer pool.Close()

	store, err := postgres.New(ctx, pool, postgres.WithSchema("idempay"))
	if err != nil {
		fmt.Println("keystore:", err)
		return
	}

	// Retention: settled records are kept a week after they closed, by
	// the database's clock. Open and pending ones are never deleted.
	n, err := store.Expire(ctx, 7*24*time.Hour)
	fmt.Println(n, err)
}
