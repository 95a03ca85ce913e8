package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/admin"
	"github.com/idempay/idempay/keystore/postgres"
	"github.com/idempay/idempay/keystore/redis"
	"github.com/idempay/idempay/provider/omise"
	"github.com/idempay/idempay/provider/stripe"
	goredis "github.com/redis/go-redis/v9"
)

// connect opens what the store URL names and returns the operations on
// it, with a func that closes what was opened.
func connect(ctx context.Context, raw string, getenv func(string) string) (admin.Ops, func(), error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, usagef("store URL does not parse: %v", err)
	}
	switch u.Scheme {
	case "http", "https":
		return &admin.Remote{BaseURL: raw, Token: getenv("IDEMPAY_ADMIN_TOKEN")}, func() {}, nil
	case "postgres", "postgresql":
		opts, dsn := pgOptions(u)
		st, err := postgres.Open(ctx, dsn, opts...)
		if err != nil {
			return nil, nil, err
		}
		return local(st, st.Close, getenv)
	case "redis", "rediss":
		prefix := u.Query().Get("idempay_prefix")
		lossy := u.Query().Get("idempay_lossy") == "true"
		q := u.Query()
		q.Del("idempay_prefix")
		q.Del("idempay_lossy")
		u.RawQuery = q.Encode()
		o, err := goredis.ParseURL(u.String())
		if err != nil {
			return nil, nil, err
		}
		rc := goredis.NewClient(o)
		var opts []redis.Option
		if prefix != "" {
			opts = append(opts, redis.WithPrefix(prefix))
		}
		if lossy {
			// A server without persistence (tests, a scratch copy): the
			// store refuses durable writes to it otherwise.
			opts = append(opts, redis.WithLossyServer())
		}
		st, err := redis.New(rc, opts...)
		if err != nil {
			_ = rc.Close()
			return nil, nil, err
		}
		return local(st, func() { _ = rc.Close() }, getenv)
	case "file":
		return nil, nil, usagef("a file store is locked by the service that runs it: mount admin.Handler in the service and name its http(s):// URL")
	case "":
		return nil, nil, usagef("no store: set -store or IDEMPAY_STORE")
	}
	return nil, nil, usagef("store URL scheme %q: want postgres, redis or http(s)", u.Scheme)
}

// pgOptions takes idempay's own query parameters out of a PostgreSQL URL.
func pgOptions(u *url.URL) ([]postgres.Option, string) {
	q := u.Query()
	var opts []postgres.Option
	if s := q.Get("idempay_schema"); s != "" {
		opts = append(opts, postgres.WithSchema(s))
	}
	if t := q.Get("idempay_table"); t != "" {
		opts = append(opts, postgres.WithTable(t))
	}
	q.Del("idempay_schema")
	q.Del("idempay_table")
	c := *u
	c.RawQuery = q.Encode()
	return opts, c.String()
}

// local builds the client the environment describes over store.
func local(store idempay.KeyStore, closeStore func(), getenv func(string) string) (admin.Ops, func(), error) {
	cfg := idempay.Config{BaseURL: getenv("IDEMPAY_BASE_URL"), Credentials: idempay.Secret(getenv("IDEMPAY_API_KEY")),
		Account: getenv("IDEMPAY_ACCOUNT"), Store: store, Instance: "idempay-cli"}
	switch p := strings.ToLower(getenv("IDEMPAY_PROVIDER")); p {
	case "", "ownapi":
		cfg.Provider = idempay.OwnAPI{LookupPath: getenv("IDEMPAY_LOOKUP_PATH"), OpLookup: getenv("IDEMPAY_LOOKUP_PATH") != ""}
	case "stripe":
		cfg.Provider = stripe.Provider{}
	case "omise":
		cfg.Provider = omise.Provider{}
	default:
		closeStore()
		return nil, nil, usagef("IDEMPAY_PROVIDER %q: want ownapi, stripe or omise", p)
	}
	c, err := idempay.New(cfg)
	if err != nil {
		closeStore()
		return nil, nil, fmt.Errorf("provider from the environment (IDEMPAY_BASE_URL, IDEMPAY_API_KEY...): %w", err)
	}
	return &admin.Local{Client: c, Store: store}, func() {
		_ = c.Close(context.Background())
		closeStore()
	}, nil
}
