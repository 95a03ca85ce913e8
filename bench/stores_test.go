package bench_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	goredis "github.com/redis/go-redis/v9"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/internal/testenv"
	"github.com/idempay/idempay/keystore/postgres"
	"github.com/idempay/idempay/keystore/redis"
)

// poolSize gives the PostgreSQL and Redis pools a connection per caller, so
// that 64 callers measure the server and not a queue for the pool.
const poolSize = 64

// storeResult is what a charge's outcome record carries, about the size
// idempay stores for a charge.
var storeResult = []byte(`{"charge":{"intent_id":"order","key":"k","id":"ch_1","status":"succeeded","state":"succeeded","amount":1500,"currency":"JPY","request_id":"req_1","replayed":false,"attempts":1,"attempt":1,"raw":{"order_id":"order","charge_id":"ch_1","status":"succeeded","amount_jpy":1500}},"kind":1}`)

// BenchmarkStoreDirect measures the write path of one charge, Reserve of a
// new intent then Resolve to succeeded, through the PostgreSQL and Redis
// stores (db=postgres|redis/client=idempay) and as the same round trips
// issued directly with pgx and go-redis (client=direct): the store's own
// statement shapes, durability included
// (the reservation's commit waits for the flush, the outcome's does not),
// without the store's code around them. The store should reach at least
// 0.9x the direct throughput at each concurrency.
func BenchmarkStoreDirect(b *testing.B) {
	for _, conc := range concurrency {
		b.Run(fmt.Sprintf("db=postgres/client=idempay/conc=%d", conc), func(b *testing.B) {
			benchOps(b, storeWrite(openPostgresStore(b)), conc)
		})
		b.Run(fmt.Sprintf("db=postgres/client=direct/conc=%d", conc), func(b *testing.B) {
			benchOps(b, pgxWrite(b), conc)
		})
		b.Run(fmt.Sprintf("db=redis/client=idempay/conc=%d", conc), func(b *testing.B) {
			benchOps(b, storeWrite(openRedisStore(b)), conc)
		})
		b.Run(fmt.Sprintf("db=redis/client=direct/conc=%d", conc), func(b *testing.B) {
			benchOps(b, goredisWrite(b), conc)
		})
	}
}

// storeWrite reserves a new intent and resolves it, as a charge does.
func storeWrite(s idempay.KeyStore) benchCharge {
	return func(ctx context.Context, id string) error {
		key, owner := uuid.NewString(), "bench/"+id
		res, err := s.Reserve(ctx, idempay.ReserveRequest{Namespace: "ownapi:default", ID: id, Attempt: 1,
			Key: key, Fingerprint: "fp", Owner: owner, Lease: 5 * time.Second})
		if err != nil {
			return err
		}
		if !res.Created || !res.Claimed {
			return fmt.Errorf("reserve %s: created %v, claimed %v", id, res.Created, res.Claimed)
		}
		return s.Resolve(ctx, idempay.Resolution{Namespace: "ownapi:default", ID: id, Key: key,
			State: idempay.StateSucceeded, ProviderRef: "ch_1", Result: storeResult})
	}
}

// pgPool connects to the test PostgreSQL, or skips.
func pgPool(b *testing.B) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(testenv.PostgresDSN())
	if err != nil {
		b.Fatalf("IDEMPAY_POSTGRES_DSN: %v", err)
	}
	cfg.MaxConns = poolSize
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		testenv.Unavailable(b, "PostgreSQL at %s: %v", testenv.PostgresDSN(), err)
	}
	b.Cleanup(pool.Close)
	testenv.Require(b, "PostgreSQL at "+testenv.PostgresDSN(), pool.Ping)
	return pool
}

// pgSchema makes a schema of its own for one measurement, dropped after.
func pgSchema(b *testing.B, pool *pgxpool.Pool) string {
	schema := testenv.UniqueName("idempay_bench_")
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`); err != nil {
			b.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

func openPostgresStore(b *testing.B) idempay.KeyStore {
	pool := pgPool(b)
	s, err := postgres.New(context.Background(), pool, postgres.WithSchema(pgSchema(b, pool)))
	if err != nil {
		b.Fatalf("postgres.New: %v", err)
	}
	return s
}

// The direct PostgreSQL statements: an insert that commits only once the
// WAL is flushed (as the store's reservation does) and an owner-checked
// update that does not wait for it (as the store's outcome does), on a
// table of the store's columns and key.
const (
	pgTable = `CREATE TABLE %s.records (
	namespace text NOT NULL, intent_id text NOT NULL, attempt integer NOT NULL, key text NOT NULL,
	fingerprint text NOT NULL, state text NOT NULL, created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL, closed_at timestamptz, creator text NOT NULL DEFAULT '',
	lease_owner text NOT NULL DEFAULT '', lease_until timestamptz, provider_ref text NOT NULL DEFAULT '',
	result bytea, history jsonb NOT NULL DEFAULT '[]', PRIMARY KEY (namespace, intent_id))`
	pgInsert = `WITH durable AS MATERIALIZED (SELECT set_config('synchronous_commit', 'on', true))
INSERT INTO %s.records AS rec (namespace, intent_id, attempt, key, fingerprint, state,
	created_at, updated_at, creator, lease_owner, lease_until)
SELECT $1::text, $2::text, 1, $3::text, 'fp', 'open', now(), now(), $4::text, $4::text,
	now() + 5000000 * interval '1 microsecond'
FROM durable
ON CONFLICT (namespace, intent_id) DO NOTHING
RETURNING rec.namespace, rec.intent_id, rec.attempt, rec.key, rec.fingerprint, rec.state,
	rec.created_at, rec.lease_owner, rec.lease_until, now()`
	pgResolve = `WITH durable AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
UPDATE %s.records AS rec SET state = 'succeeded', updated_at = clock_timestamp(),
	closed_at = clock_timestamp(), lease_owner = '', lease_until = NULL, provider_ref = $4::text, result = $5::bytea
FROM durable
WHERE rec.namespace = $1::text AND rec.intent_id = $2::text AND rec.key = $3::text AND rec.state IN ('open', 'pending')
RETURNING true`
)

func pgxWrite(b *testing.B) benchCharge {
	pool := pgPool(b)
	schema := pgSchema(b, pool)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf(pgTable, schema)); err != nil {
		b.Fatal(err)
	}
	insert, resolve := fmt.Sprintf(pgInsert, schema), fmt.Sprintf(pgResolve, schema)
	return func(ctx context.Context, id string) error {
		key, owner := uuid.NewString(), "bench/"+id
		var (
			ns, intent, k, fp, st, lo string
			attempt                   int
			created, until, now       time.Time
		)
		if err := pool.QueryRow(ctx, insert, "ownapi:default", id, key, owner).Scan(&ns, &intent, &attempt, &k, &fp, &st,
			&created, &lo, &until, &now); err != nil {
			return fmt.Errorf("insert %s: %w", id, err)
		}
		var applied bool
		if err := pool.QueryRow(ctx, resolve, "ownapi:default", id, key, "ch_1", storeResult).Scan(&applied); err != nil {
			return fmt.Errorf("resolve %s: %w", id, err)
		}
		return nil
	}
}

// redisClient connects to the test Redis, or skips.
func redisClient(b *testing.B) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr(), PoolSize: poolSize})
	b.Cleanup(func() { _ = c.Close() })
	testenv.Require(b, "Redis at "+testenv.RedisAddr(), func(ctx context.Context) error { return c.Ping(ctx).Err() })
	return c
}

// redisPrefix is a key prefix of its own for one measurement, its keys
// deleted after.
func redisPrefix(b *testing.B, c *goredis.Client) string {
	prefix := testenv.UniqueName("idempaybench:") + ":"
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			_ = c.Unlink(ctx, iter.Val()).Err()
		}
	})
	return prefix
}

func openRedisStore(b *testing.B) idempay.KeyStore {
	c := redisClient(b)
	s, err := redis.New(c, redis.WithPrefix(redisPrefix(b, c)), redis.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatalf("redis.New: %v", err)
	}
	return s
}

// The direct Redis scripts: the store's reservation of a new record (read
// it, write the hash, index it as open, answer the hash and the server's
// clock) and its close (check key and state, write, move it from the open
// index to the settled one), one atomic script each.
var (
	directReserve = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cur = redis.call('HMGET', KEYS[1], 'st', 'at', 'fp', 'lo', 'lu')
if not cur[1] then
	redis.call('HSET', KEYS[1], 'ns', ARGV[2], 'id', ARGV[1], 'at', '1', 'k', ARGV[3], 'fp', 'fp',
		'st', 'open', 'ca', string.format('%016.0f', now) .. '000', 'ua', string.format('%016.0f', now) .. '000',
		'cl', '', 'cr', ARGV[4], 'lo', ARGV[4], 'lu', string.format('%016.0f', now + 5000000) .. '000', 'pr', '')
	redis.call('ZADD', KEYS[2], string.format('%.0f', now), ARGV[1])
end
return {'insert', string.format('%016.0f', now) .. '000', redis.call('HGETALL', KEYS[1])}`)
	directResolve = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cur = redis.call('HMGET', KEYS[1], 'k', 'st', 'lo')
if cur[1] ~= ARGV[2] or (cur[2] ~= 'open' and cur[2] ~= 'pending') then
	return {0, cur[1], cur[2], cur[3]}
end
redis.call('HSET', KEYS[1], 'st', 'succeeded', 'ua', string.format('%016.0f', now) .. '000',
	'cl', string.format('%016.0f', now) .. '000', 'lo', '', 'lu', '', 'pr', ARGV[3], 'res', ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], string.format('%.0f', now), ARGV[1])
return {1, cur[1], cur[2], cur[3]}`)
)

func goredisWrite(b *testing.B) benchCharge {
	c := redisClient(b)
	prefix := redisPrefix(b, c)
	ctx := context.Background()
	// As the store decides (keystore/redis Durability): WAITAOF after a
	// durable write when the server has it (7.2 on) and the AOF is on; an
	// older server with appendfsync always has the write on disk before
	// it answers.
	info, _ := c.Do(ctx, "COMMAND", "INFO", "WAITAOF").Slice()
	aof := c.ConfigGet(ctx, "appendonly").Val()["appendonly"] == "yes" && len(info) == 1 && info[0] != nil
	for _, s := range []*goredis.Script{directReserve, directResolve} {
		if err := s.Load(ctx, c).Err(); err != nil {
			b.Fatal(err)
		}
	}
	open, settled := prefix+"{ownapi:default}:open", prefix+"{ownapi:default}:settled"
	return func(ctx context.Context, id string) error {
		key, owner := uuid.NewString(), "bench/"+id
		rec := prefix + "{ownapi:default}:r:" + id
		if err := directReserve.EvalSha(ctx, c, []string{rec, open}, id, "ownapi:default", key, owner).Err(); err != nil {
			return fmt.Errorf("reserve %s: %w", id, err)
		}
		if aof { // as the store does: the reservation on disk before the first byte
			if err := c.Do(ctx, "WAITAOF", "1", "0", "0").Err(); err != nil {
				return err
			}
		}
		r, err := directResolve.EvalSha(ctx, c, []string{rec, open, settled}, id, key, "ch_1", storeResult).Slice()
		if err != nil {
			return fmt.Errorf("resolve %s: %w", id, err)
		}
		if n, _ := r[0].(int64); n != 1 {
			return fmt.Errorf("resolve %s: not applied (%v)", id, r)
		}
		return nil
	}
}
