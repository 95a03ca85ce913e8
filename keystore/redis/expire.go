package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// expireScanScript finds a batch of settled records closed more than the
// retention ago, by the server's clock.
//
// KEYS: settled index. ARGV: 1 retention in µs, 2 batch size, 3 clock
// offset in µs.
//
// Reply: {cutoff, ids}: the cutoff as a stored instant ("" when it lies
// before 1970, so nothing is old enough) and up to batch intent IDs whose
// entry's score (ClosedAt, µs) is before it.
var expireScanScript = goredis.NewScript(luaTime + `
local cutoff = now_us(ARGV[3]) - tonumber(ARGV[1])
if cutoff <= 0 then
	return {'', {}}
end
local ids = redis.call('ZRANGE', KEYS[1], '-inf', '(' .. fmt(cutoff), 'BYSCORE', 'LIMIT', '0', ARGV[2])
return {stamp(cutoff), ids}
`)

// expireScript deletes, among a batch of settled-index entries, the
// records that are settled and were closed before the cutoff.
//
// KEYS: settled index, then the record of each entry. ARGV: 1 cutoff (a
// stored instant, whole µs), then the intent ID of each entry, in the order
// of KEYS[2:].
//
// Reply: how many records it deleted. An entry whose record is gone
// (expired by TTL) or open again (a new attempt) is dropped from the index;
// one whose record closed later than its score says is moved to the
// record's closing time, so the next batch never meets it again.
var expireScript = goredis.NewScript(luaTime + `
local cutoff = us_down(ARGV[1])
local deleted = 0
for i = 2, #KEYS do
	local id = ARGV[i]
	local cur = redis.call('HMGET', KEYS[i], 'st', 'cl', 'ua')
	local closed = cur[2]
	if not closed or closed == '' then
		closed = cur[3] -- the old layout: closed by its last write
	end
	if (cur[1] ~= 'succeeded' and cur[1] ~= 'failed') or not closed or closed == '' then
		redis.call('ZREM', KEYS[1], id)
	elseif us_down(closed) < cutoff then
		redis.call('DEL', KEYS[i])
		redis.call('ZREM', KEYS[1], id)
		deleted = deleted + 1
	else
		redis.call('ZADD', KEYS[1], fmt(us_down(closed)), id)
	end
end
return deleted
`)

// Expire implements idempay.KeyStore. For each namespace in the namespaces
// set it first moves the entries of the old layout's closed index (scored
// by CreatedAt) to the settled index (scored by ClosedAt), then, batch by
// batch (WithExpireBatch), finds the records closed more than retention ago
// by the server's clock and deletes them, checking each record again in
// the deleting script: open and pending records are never deleted. If ctx
// ends, Expire returns what it deleted so far with the error. A negative
// retention is refused.
//
// With WithClosedTTL, Redis also deletes settled records by itself, and
// Expire deletes only those still there.
func (s *Store) Expire(ctx context.Context, retention time.Duration) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if retention < 0 {
		return 0, errors.New("redis: expire: negative retention")
	}
	if retention > maxLease {
		return 0, nil // nothing the store holds closed that long ago
	}
	total := 0
	iter := s.client.SScan(ctx, s.namespacesKey(), 0, "", 100).Iterator()
	for iter.Next(ctx) {
		n, err := s.expireNamespace(ctx, iter.Val(), micro(retention))
		total += n
		if err != nil {
			return total, fmt.Errorf("redis: expire %q: %w", iter.Val(), err)
		}
	}
	if err := iter.Err(); err != nil {
		return total, fmt.Errorf("redis: expire: %w", err)
	}
	return total, nil
}

func (s *Store) expireNamespace(ctx context.Context, namespace, retention string) (int, error) {
	if err := s.migrateLegacy(ctx, namespace); err != nil {
		return 0, err
	}
	settled := s.keysOf(namespace, "").settled
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		cutoff, ids, err := s.expireScan(ctx, settled, retention)
		if err != nil || len(ids) == 0 {
			return total, err
		}
		keys := append(make([]string, 0, len(ids)+1), settled)
		args := append(make([]any, 0, len(ids)+1), cutoff)
		for _, id := range ids {
			keys = append(keys, s.keysOf(namespace, id).record)
			args = append(args, id)
		}
		n, err := expireScript.Run(ctx, s.client, keys, args...).Int()
		total += n
		if err != nil || len(ids) < s.cfg.expireBatch {
			return total, err
		}
	}
}

// expireScan runs expireScanScript on a namespace's settled index.
func (s *Store) expireScan(ctx context.Context, settled, retention string) (string, []string, error) {
	v, err := expireScanScript.Run(ctx, s.client, []string{settled},
		retention, s.cfg.expireBatch, micro(s.offset)).Slice()
	if err != nil {
		return "", nil, err
	}
	if len(v) != 2 {
		return "", nil, fmt.Errorf("unexpected script reply %v", v)
	}
	cutoff, _ := v[0].(string)
	list, _ := v[1].([]any)
	ids := make([]string, 0, len(list))
	for _, x := range list {
		id, ok := x.(string)
		if !ok {
			return "", nil, fmt.Errorf("unexpected script reply element %T", x)
		}
		ids = append(ids, id)
	}
	if cutoff == "" {
		ids = nil
	}
	return cutoff, ids, nil
}
