package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// The old layout, written by the store before records had attempts, keeps
// working:
//
//   - A record's hash lacks "at", "cr", "cl" and history fields: it reads
//     as attempt 1, with no creator (a Reserve repeated after a lost reply
//     to an old-layout insert cannot be told from another caller's, and is
//     reported not created, as before), and, if closed, closed at its
//     UpdatedAt, which the closing Resolve wrote last. The scripts read
//     the same defaults; a Resolve that closes such a record stamps "cl",
//     and a new attempt over it rewrites the record whole.
//   - Its instants may carry nanoseconds (they came from the clients'
//     clocks); they are read truncated to the microsecond, the precision
//     of the index scores, and a lease is over only once its exact instant
//     has passed.
//   - The open index is unchanged: score CreatedAt in µs, member the intent.
//   - The closed index ("<tag>:closed") was scored by CreatedAt, which must
//     not decide retention. Expire moves its entries to the settled index
//     with the record's closing time as score before it expires anything
//     (migrateLegacy), and the scripts drop an intent from it whenever they
//     settle or reopen it, so it empties and is never written again.

// migrateScript moves a batch of the old closed index's entries to the
// settled index, scored by the record's closing time.
//
// KEYS: 1 old closed index, 2 settled index, then the record of each
// entry. ARGV: the intent ID of each entry, in the order of KEYS[3:].
//
// Reply: how many entries it moved. An entry whose record is gone or no
// longer settled is only dropped.
var migrateScript = goredis.NewScript(luaTime + `
local moved = 0
for i = 3, #KEYS do
	local id = ARGV[i - 2]
	local cur = redis.call('HMGET', KEYS[i], 'st', 'cl', 'ua')
	local closed = cur[2]
	if not closed or closed == '' then
		closed = cur[3]
	end
	if (cur[1] == 'succeeded' or cur[1] == 'failed') and closed and closed ~= '' then
		redis.call('ZADD', KEYS[2], fmt(us_down(closed)), id)
		moved = moved + 1
	end
	redis.call('ZREM', KEYS[1], id)
end
return moved
`)

// migrateLegacy empties a namespace's old closed index into its settled
// index, a batch at a time. Once empty it costs one ZRANGE.
func (s *Store) migrateLegacy(ctx context.Context, namespace string) error {
	k := s.keysOf(namespace, "")
	for {
		ids, err := s.client.ZRange(ctx, k.legacy, 0, int64(s.cfg.expireBatch)-1).Result()
		if err != nil || len(ids) == 0 {
			return err
		}
		keys := append(make([]string, 0, len(ids)+2), k.legacy, k.settled)
		args := make([]any, 0, len(ids))
		for _, id := range ids {
			keys = append(keys, s.keysOf(namespace, id).record)
			args = append(args, id)
		}
		if err := migrateScript.Run(ctx, s.client, keys, args...).Err(); err != nil {
			return err
		}
		if len(ids) < s.cfg.expireBatch {
			return nil
		}
	}
}
