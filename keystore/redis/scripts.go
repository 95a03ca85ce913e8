package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts use the hash field names of codec.go literally. Each one
// touches only the keys it is given, all of one namespace and so of one
// Cluster slot, and runs atomically: no other command sees a record
// half-written or its indexes out of step with it.
//
// Every instant comes from the server's clock, redis.call('TIME'), read
// inside the script. Redis allows a non-deterministic command before writes
// since 5.0 with effects replication, the only mode from 7.0 on: replicas
// and the AOF receive the writes with the instants already in them, never
// the script to run again.

// luaTime is the preamble of the scripts that read the clock. Instants are
// handled in Unix microseconds, which a Lua number (a double) holds exactly
// below 2^53 (the year 2255), and stored as 19-digit nanoseconds. A number
// given to redis.call is formatted with 14 significant digits, so scores
// are always passed as strings made by fmt.
const luaTime = `
-- now: the server's clock in µs, moved by offset µs (0 but in tests).
local function now_us(offset)
	local t = redis.call('TIME')
	return tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(offset)
end
-- fmt: an integral number of µs as a decimal string, for a score.
local function fmt(us)
	return string.format('%.0f', us)
end
-- stamp: µs as a stored instant, 19 digits of nanoseconds.
local function stamp(us)
	return string.format('%016.0f', us) .. '000'
end
-- us_up: a stored instant in µs, rounded up: an old-layout instant with
-- nanoseconds counts as the next microsecond, so a lease is over only once
-- it is wholly over.
local function us_up(s)
	local us = tonumber(string.sub(s, 1, -4))
	if string.sub(s, -3) ~= '000' then
		us = us + 1
	end
	return us
end
-- us_down: a stored instant in µs, rounded down.
local function us_down(s)
	return tonumber(string.sub(s, 1, -4))
end
`

// reserveScript inserts, begins a new attempt of, claims or reads a record,
// as KeyStore.Reserve says.
//
// KEYS: record, open index, settled index, legacy closed index, marker.
// ARGV: 1 intent ID, 2 namespace, 3 attempt, 4 key, 5 fingerprint,
// 6 owner, 7 lease in µs, 8 clock offset in µs, 9 the highest write
// sequence this Store has seen for the namespace.
//
// Reply: {op, now, HGETALL, seq, lost} with op "insert", "begin", "claim"
// or "read", now the server's clock as a stored instant, seq the marker's
// write sequence after this call and lost the instant a loss of the data
// set was noticed ("" if never; see marker.go).
var reserveScript = goredis.NewScript(luaTime + `
local now = now_us(ARGV[8])
local cur = redis.call('HMGET', KEYS[1], 'st', 'at', 'fp', 'lo', 'lu')

-- The marker's sequence is below what this Store has seen (the marker is
-- gone, or older): writes the server acknowledged are lost. Noted once,
-- for every Store of the fleet to read.
local mark = redis.call('HMGET', KEYS[5], 'seq', 'lost')
local lost = mark[2] or ''
if tonumber(mark[1] or '0') < tonumber(ARGV[9]) then
	lost = stamp(now)
	redis.call('HSET', KEYS[5], 'lost', lost)
end
local seq = redis.call('HINCRBY', KEYS[5], 'seq', 1)

-- archive copies the current attempt n, failed, to the fields h<n>.*.
local function archive(n)
	local f = redis.call('HMGET', KEYS[1], 'k', 'fp', 'ca', 'cl', 'ua', 'pr', 'res')
	local closed = f[4]
	if not closed or closed == '' then
		closed = f[5] -- the old layout: closed by its last write
	end
	local p = 'h' .. n .. '.'
	redis.call('HSET', KEYS[1], p .. 'k', f[1], p .. 'fp', f[2], p .. 'st', 'failed',
		p .. 'ca', f[3], p .. 'cl', closed, p .. 'pr', f[6] or '')
	if f[7] then
		redis.call('HSET', KEYS[1], p .. 'res', f[7])
	end
end

-- begin makes the request the current attempt: open, created now by the
-- owner and leased to it, never expiring, in the open index only.
local function begin()
	redis.call('HDEL', KEYS[1], 'res')
	redis.call('HSET', KEYS[1], 'ns', ARGV[2], 'id', ARGV[1], 'at', ARGV[3],
		'k', ARGV[4], 'fp', ARGV[5], 'st', 'open', 'ca', stamp(now), 'ua', stamp(now),
		'cl', '', 'cr', ARGV[6], 'lo', ARGV[6], 'lu', stamp(now + tonumber(ARGV[7])), 'pr', '')
	redis.call('PERSIST', KEYS[1])
	redis.call('ZREM', KEYS[3], ARGV[1])
	redis.call('ZREM', KEYS[4], ARGV[1])
	redis.call('ZADD', KEYS[2], fmt(now), ARGV[1])
end

-- claimable: unsettled, the request's fingerprint, and the lease free,
-- the owner's, or over (free from LeaseUntil on).
local function claimable()
	if cur[1] ~= 'open' and cur[1] ~= 'pending' then
		return false
	end
	if cur[3] ~= ARGV[5] then
		return false
	end
	local lo, lu = cur[4], cur[5]
	return not lo or lo == '' or lo == ARGV[6] or not lu or lu == '' or now >= us_up(lu)
end

local op = 'read'
if not cur[1] then
	begin()
	op = 'insert'
elseif cur[1] == 'failed' and tonumber(cur[2] or '1') == tonumber(ARGV[3]) - 1 then
	archive(cur[2] or '1')
	begin()
	op = 'begin'
elseif claimable() then
	redis.call('HSET', KEYS[1], 'lo', ARGV[6], 'lu', stamp(now + tonumber(ARGV[7])), 'ua', stamp(now))
	op = 'claim'
end
return {op, stamp(now), redis.call('HGETALL', KEYS[1]), seq, lost}
`)

// resolveScript checks the key, the state and (if one is given) the lease
// owner, then records the outcome and releases the lease, as
// KeyStore.Resolve says.
//
// KEYS: record, open index, settled index, legacy closed index.
// ARGV: 1 intent ID, 2 key, 3 state, 4 provider ref (kept if empty),
// 5 "1" if a result is given, 6 result, 7 TTL in ms for a settled record
// (0: none), 8 lease owner that must hold the lease (empty: no check),
// 9 clock offset in µs.
//
// Reply: "ok", "notfound", "mismatch", "resolved" or "leaselost".
var resolveScript = goredis.NewScript(luaTime + `
local cur = redis.call('HMGET', KEYS[1], 'k', 'st', 'lo')
if not cur[1] then
	return 'notfound'
end
if cur[1] ~= ARGV[2] then
	return 'mismatch'
end
if cur[2] == 'succeeded' or cur[2] == 'failed' then
	return 'resolved'
end
if ARGV[8] ~= '' and cur[3] ~= ARGV[8] then
	return 'leaselost'
end
local now = now_us(ARGV[9])
-- One HSET of every field that changes: each command of a script is a
-- command of its own in the AOF, and with appendfsync always the server
-- writes (and syncs) every byte of them before it answers.
local f = {'ua', stamp(now), 'lo', '', 'lu', ''}
local function set(k, v) f[#f + 1] = k; f[#f + 1] = v end
-- State open only releases the lease: a pending record stays pending.
if ARGV[3] ~= 'open' then
	set('st', ARGV[3])
end
if ARGV[4] ~= '' then
	set('pr', ARGV[4])
end
if ARGV[5] == '1' then
	set('res', ARGV[6])
end
local settled = ARGV[3] == 'succeeded' or ARGV[3] == 'failed'
if settled then
	set('cl', stamp(now))
end
redis.call('HSET', KEYS[1], unpack(f))
if settled then
	redis.call('ZREM', KEYS[2], ARGV[1])
	redis.call('ZREM', KEYS[4], ARGV[1])
	redis.call('ZADD', KEYS[3], fmt(now), ARGV[1])
	local ttl = tonumber(ARGV[7])
	if ttl > 0 then
		-- Only now, settled, may the record expire; the entries of records
		-- settled more than the TTL ago name records Redis has deleted.
		redis.call('PEXPIRE', KEYS[1], ARGV[7])
		redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. fmt(now - ttl * 1000))
	end
end
return 'ok'
`)
