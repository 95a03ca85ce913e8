package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts use the hash field names of codec.go literally. Each one
// touches only the keys it is given, all of one namespace and so of one
// Cluster slot, and runs atomically: no other command sees a record
// half-written or its indexes out of step with it.

// reserveScript inserts the record if absent, else claims or reads it.
//
// KEYS: record, open index, closed index.
// ARGV: 1 intent ID, 2 namespace, 3 key, 4 fingerprint, 5 state,
// 6 created, 7 updated, 8 lease owner, 9 lease until, 10 provider ref,
// 11 "1" if a result is given, 12 result, 13 index score,
// 14 TTL in ms for a record inserted already settled (0: none).
//
// Reply: {1} when inserted; {0, claimed, HGETALL} otherwise.
var reserveScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
	redis.call('HSET', KEYS[1], 'ns', ARGV[2], 'id', ARGV[1], 'k', ARGV[3],
		'fp', ARGV[4], 'st', ARGV[5], 'ca', ARGV[6], 'ua', ARGV[7],
		'lo', ARGV[8], 'lu', ARGV[9], 'pr', ARGV[10])
	if ARGV[11] == '1' then
		redis.call('HSET', KEYS[1], 'res', ARGV[12])
	end
	if ARGV[5] == 'open' or ARGV[5] == 'pending' then
		redis.call('ZADD', KEYS[2], ARGV[13], ARGV[1])
	else
		redis.call('ZADD', KEYS[3], ARGV[13], ARGV[1])
		if tonumber(ARGV[14]) > 0 then
			redis.call('PEXPIRE', KEYS[1], ARGV[14])
		end
	end
	return {1}
end
local cur = redis.call('HMGET', KEYS[1], 'st', 'lo', 'lu')
local claimed = 0
-- Claimable: unsettled, and the lease free, ours, or over at the caller's
-- UpdatedAt (over at LeaseUntil itself). Times are fixed-width digit
-- strings, so string order is time order.
if (cur[1] == 'open' or cur[1] == 'pending') and
	(cur[2] == '' or cur[2] == ARGV[8] or cur[3] == '' or ARGV[7] >= cur[3]) then
	redis.call('HSET', KEYS[1], 'lo', ARGV[8], 'lu', ARGV[9], 'ua', ARGV[7])
	claimed = 1
end
return {0, claimed, redis.call('HGETALL', KEYS[1])}
`)

// resolveScript compares the key (and the lease owner, if one is given)
// and completes the record.
//
// KEYS: record, open index, closed index.
// ARGV: 1 intent ID, 2 key, 3 state, 4 provider ref (kept if empty),
// 5 "1" if a result is given, 6 result, 7 at, 8 TTL in ms for a settled
// record (0: none), 9 closed-index score below which entries are trimmed
// when a TTL is set, 10 lease owner that must hold the lease (empty: no
// check).
//
// Reply: "ok", "notfound", "mismatch", "resolved" or "leaselost".
var resolveScript = goredis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'k', 'st', 'ca', 'lo')
if not cur[1] then
	return 'notfound'
end
if cur[1] ~= ARGV[2] then
	return 'mismatch'
end
if cur[2] == 'succeeded' or cur[2] == 'failed' then
	return 'resolved'
end
if ARGV[10] ~= '' and cur[4] ~= ARGV[10] then
	return 'leaselost'
end
-- State open only releases the lease: a pending record stays pending.
if ARGV[3] ~= 'open' then
	redis.call('HSET', KEYS[1], 'st', ARGV[3])
end
redis.call('HSET', KEYS[1], 'ua', ARGV[7], 'lo', '', 'lu', '')
if ARGV[4] ~= '' then
	redis.call('HSET', KEYS[1], 'pr', ARGV[4])
end
if ARGV[5] == '1' then
	redis.call('HSET', KEYS[1], 'res', ARGV[6])
end
if ARGV[3] == 'succeeded' or ARGV[3] == 'failed' then
	redis.call('ZREM', KEYS[2], ARGV[1])
	-- Score: CreatedAt in microseconds (drop the last three digits of the
	-- nanoseconds), exact in a double.
	local score = tonumber(string.sub(cur[3], 1, -4)) or 0
	redis.call('ZADD', KEYS[3], score, ARGV[1])
	if tonumber(ARGV[8]) > 0 then
		-- Only now, settled, may the record expire.
		redis.call('PEXPIRE', KEYS[1], ARGV[8])
		redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[9])
	end
end
return 'ok'
`)

// expireScript deletes the settled records among a batch of closed-index
// entries.
//
// KEYS: closed index, then the record of each entry.
// ARGV: 1 cutoff (fixed-width nanoseconds), then the intent ID of each
// entry, in the order of KEYS[2:].
//
// Reply: {deleted, kept}. kept counts entries left in the index because the
// record was created at or after the cutoff (they share the cutoff's
// microsecond). Entries whose record is gone (expired by TTL) or is no
// longer settled (its intent started afresh after a TTL expiry) are dropped
// from the index without deleting anything.
var expireScript = goredis.NewScript(`
local deleted, kept = 0, 0
for i = 2, #KEYS do
	local id = ARGV[i]
	local cur = redis.call('HMGET', KEYS[i], 'st', 'ca')
	if cur[1] == 'succeeded' or cur[1] == 'failed' then
		if cur[2] < ARGV[1] then
			redis.call('DEL', KEYS[i])
			redis.call('ZREM', KEYS[1], id)
			deleted = deleted + 1
		else
			kept = kept + 1
		end
	else
		redis.call('ZREM', KEYS[1], id)
	end
end
return {deleted, kept}
`)
