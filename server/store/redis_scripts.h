// The Lua scripts of the Redis backend: each runs atomically in Redis, so
// that a job is queued with its record, taken once, and finished once,
// whichever instances race for it. Keys: "kibitz:job:ID" (a hash: the
// record, "entry" its stream entry, "runs" how often it was taken and not
// handed back),
// "kibitz:plies:ID" (a review's finished plies), "kibitz:jobs" (the stream
// read by the consumer group "kibitz"), "kibitz:eval:POSITION" (a hash,
// lines -> "DEPTH BODY"), counters "kibitz:finished", "kibitz:evals",
// "kibitz:eval_bytes"; channel "kibitz:cancel".
#pragma once

namespace kibitz::server::store::redis_lua {

// KEYS job, stream, finished counter. ARGV enqueue ('1'/'0'), id, ttl_ms,
// field, value... An unfinished job goes on the stream; a finished one (an
// answer known at once) gets its TTL and is counted.
inline constexpr const char* kCreate = R"lua(
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
if ARGV[1] == '1' then
  local e = redis.call('XADD', KEYS[2], '*', 'id', ARGV[2])
  redis.call('HSET', KEYS[1], 'entry', e)
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('INCR', KEYS[3])
end
return 1
)lua";

// KEYS job, plies, stream, finished counter. ARGV group, ttl_ms, finishing
// ('1'/'0'), field, value... Returns -1 (no such job), 0 (finished already:
// nothing written) or 1. Finishing acks and deletes the stream entry and
// starts the retention.
inline constexpr const char* kUpdate = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local fin = redis.call('HGET', KEYS[1], 'finished_ms')
if fin and fin ~= '0' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
if ARGV[3] == '1' then
  local e = redis.call('HGET', KEYS[1], 'entry')
  if e then
    redis.call('XACK', KEYS[3], ARGV[1], e)
    redis.call('XDEL', KEYS[3], e)
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('INCR', KEYS[4])
end
return 1
)lua";

// KEYS job, plies, stream. ARGV group. A job that could not be queued.
inline constexpr const char* kRemove = R"lua(
local e = redis.call('HGET', KEYS[1], 'entry')
if e then
  redis.call('XACK', KEYS[3], ARGV[1], e)
  redis.call('XDEL', KEYS[3], e)
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
)lua";

// KEYS job, stream, plies, finished counter. ARGV group, entry, consumer,
// max_attempts, now_ms, ttl_ms. The job of a stream entry just read or
// claimed: its record (marked running, "runs" counted), or nil when it is
// gone, finished, or the entry is not its current one (then the entry is
// acked and deleted). A job claimed max_attempts times already (> 0) and
// never finished took each instance that ran it down: it ends failed with
// code "crashed" instead, and the count of runs is returned (an integer).
inline constexpr const char* kClaim = R"lua(
local function drop()
  redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
  redis.call('XDEL', KEYS[2], ARGV[2])
end
if redis.call('EXISTS', KEYS[1]) == 0 then drop() return nil end
local fin = redis.call('HGET', KEYS[1], 'finished_ms')
local e = redis.call('HGET', KEYS[1], 'entry')
if (fin and fin ~= '0') or e ~= ARGV[2] then drop() return nil end
local runs = tonumber(redis.call('HGET', KEYS[1], 'runs') or '0') or 0
local most = tonumber(ARGV[4])
if most > 0 and runs >= most then
  local why = '{"code":"crashed","message":"the job was running when the server stopped ' ..
    runs .. ' times; it is not run again"}'
  redis.call('HSET', KEYS[1], 'status', 'failed', 'error', why, 'finished_ms', ARGV[5])
  drop()
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
  redis.call('INCR', KEYS[4])
  return runs
end
redis.call('HSET', KEYS[1], 'status', 'running', 'holder', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'runs', 1)
return redis.call('HGETALL', KEYS[1])
)lua";

// KEYS stream. ARGV group, consumer, id, entry, id, entry... Keeps this
// consumer's entries from going idle (XCLAIM JUSTID resets the idle time),
// and returns {id, why} for the jobs to stop: 'c' cancelled, 'f' finished
// elsewhere, 'l' taken over by another instance. A job taken over from
// this instance, which is alive, gets the run of its claim back: "runs"
// counts the instances a job took down (kClaim), not slow heartbeats.
inline constexpr const char* kBeat = R"lua(
local out = {}
for i = 3, #ARGV, 2 do
  local id, e = ARGV[i], ARGV[i + 1]
  local v = redis.call('HMGET', 'kibitz:job:' .. id, 'cancel', 'finished_ms', 'runs')
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], e, e, 1)
  local finished = v[2] and v[2] ~= '0'
  if p[1] == nil or p[1][2] ~= ARGV[2] then
    if not finished and (tonumber(v[3] or '0') or 0) > 0 then
      redis.call('HINCRBY', 'kibitz:job:' .. id, 'runs', -1)
    end
    table.insert(out, {id, finished and 'f' or 'l'})
  else
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, e, 'JUSTID')
    if finished then table.insert(out, {id, 'f'})
    elseif v[1] == '1' then table.insert(out, {id, 'c'}) end
  end
end
return out
)lua";

// KEYS job, stream. ARGV group, consumer, entry, id. An unfinished job this
// consumer holds goes back on the stream as a new entry, and the run its
// claim counted is given back (it was stopped, it did not crash).
inline constexpr const char* kHandBack = R"lua(
local p = redis.call('XPENDING', KEYS[2], ARGV[1], ARGV[3], ARGV[3], 1)
if p[1] == nil or p[1][2] ~= ARGV[2] then return 0 end
local fin = redis.call('HGET', KEYS[1], 'finished_ms')
local e = redis.call('HGET', KEYS[1], 'entry')
redis.call('XACK', KEYS[2], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[2], ARGV[3])
if not fin or fin ~= '0' or e ~= ARGV[3] then return 0 end
local n = redis.call('XADD', KEYS[2], '*', 'id', ARGV[4])
redis.call('HSET', KEYS[1], 'entry', n, 'status', 'queued')
if tonumber(redis.call('HGET', KEYS[1], 'runs') or '0') > 0 then
  redis.call('HINCRBY', KEYS[1], 'runs', -1)
end
return 1
)lua";

// KEYS eval, entries counter, bytes counter. ARGV lines, depth, "DEPTH BODY",
// ttl_ms. Kept unless an analysis as deep with as many lines is kept.
inline constexpr const char* kPutEval = R"lua(
local all = redis.call('HGETALL', KEYS[1])
local mpv, depth = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, #all, 2 do
  local m = tonumber(all[i])
  local d = tonumber(string.match(all[i + 1], '^(%d+)'))
  if m and d and m >= mpv and d >= depth then return 0 end
end
if #all == 0 then redis.call('INCR', KEYS[2]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('INCRBY', KEYS[3], string.len(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
)lua";

}  // namespace kibitz::server::store::redis_lua
