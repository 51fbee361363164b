// The Lua scripts of the Redis backend: each runs atomically in Redis, so
// that a job is queued with its record, taken once, and finished once,
// whichever instances race for it. Keys: "kibitz:job:ID" (a hash: the
// record, "entry" its stream entry, "runs" how often it was taken and not
// handed back),
// "kibitz:plies:ID" (a review's finished plies), "kibitz:jobs" (the stream
// read by the consumer group "kibitz"), "kibitz:eval:POSITION" (a hash,
// lines -> "DEPTH BODY"), counters "kibitz:finished", "kibitz:evals",
// "kibitz:eval_bytes"; the caps' sorted sets "kibitz:alljobs",
// "kibitz:owner:LEN:OWNER:jobs" and "...:open" (kCreate); channel
// "kibitz:cancel"; "kibitz:idem:LEN:OWNER:KEY" -> "JOB_ID FINGERPRINT" (an
// Idempotency-Key). Every key has a TTL but the stream, which holds only
// unfinished jobs (at most max_queued of them, kCreate) and the consumer
// group's state. LEN is the owner's length: no owner and suffix can spell
// another pair's key.
#pragma once

namespace kibitz::server::store::redis_lua {

// A Lua function the scripts that end a job (kUpdate, kClaim) start with:
// the job KEYS[1] is out of its owner's unfinished set, and kept in the
// caps' sets (kCreate) until `expiry` (ms), when its retention ends.
#define KIBITZ_LUA_ENDED_IN_CAPS                                         \
  "local function ended_in_caps(expiry)\n"                               \
  "  local v = redis.call('HMGET', KEYS[1], 'id', 'owner')\n"            \
  "  local id, owner = v[1] or '', v[2] or ''\n"                         \
  "  local pre = 'kibitz:owner:' .. string.len(owner) .. ':' .. owner\n" \
  "  redis.call('ZREM', pre .. ':open', id)\n"                           \
  "  redis.call('ZADD', pre .. ':jobs', 'XX', expiry, id)\n"             \
  "  redis.call('ZADD', 'kibitz:alljobs', 'XX', expiry, id)\n"           \
  "end\n"

// KEYS job, stream, finished counter, all jobs, the owner's jobs, the
// owner's unfinished jobs (sorted sets of ids by the time their keys
// expire). ARGV enqueue ('1'/'0'), id, ttl_ms (a finished job's retention),
// now_ms, life_ms (an unfinished job's longest life: deadline + retention),
// max_jobs, max_jobs_per_client, max_work_per_client, max_queued (0: no
// cap), counter_ttl_ms, field, value... The caps are checked first: a refusal
// returns the cap's code and writes nothing. An unfinished job goes on the
// stream; a finished one (an answer known at once) is counted. Every key
// written gets a TTL.
inline constexpr const char* kCreate = R"lua(
local now, ttl, life = tonumber(ARGV[4]), tonumber(ARGV[3]), tonumber(ARGV[5])
local max_jobs, per_client, work, queued =
  tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
-- Counted before anything is written: the first write of a script under
-- maxmemory is the one Redis may refuse (OOM); later ones it lets through.
local function live(key) return redis.call('ZCOUNT', key, '(' .. now, '+inf') end
local unfinished = ARGV[1] == '1'
if unfinished then
  if queued > 0 and redis.call('XLEN', KEYS[2]) >= queued then return 'queue_full' end
  if work > 0 and live(KEYS[6]) >= work then return 'client_work_cap' end
end
if per_client > 0 and live(KEYS[5]) >= per_client then return 'client_jobs_cap' end
if max_jobs > 0 and live(KEYS[4]) >= max_jobs then return 'queue_full' end
redis.call('HSET', KEYS[1], unpack(ARGV, 11))
for i = 4, 6 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
local expiry = now + ttl
if unfinished then
  local e = redis.call('XADD', KEYS[2], '*', 'id', ARGV[2])
  redis.call('HSET', KEYS[1], 'entry', e)
  expiry = now + life
  redis.call('ZADD', KEYS[6], expiry, ARGV[2])
else
  redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[10])
end
redis.call('PEXPIRE', KEYS[1], expiry - now)
local longest = math.max(ttl, life)
for i = 4, 6 do
  if i < 6 or unfinished then
    if i < 6 then redis.call('ZADD', KEYS[i], expiry, ARGV[2]) end
    redis.call('PEXPIRE', KEYS[i], longest)
  end
end
return 1
)lua";

// KEYS job, plies, stream, finished counter. ARGV group, ttl_ms, finishing
// ('1'/'0'), now_ms, counter_ttl_ms, field, value... Returns -1 (no such
// job), 0 (finished already: nothing written) or 1. Finishing acks and
// deletes the stream entry, takes the job out of its owner's unfinished
// set (kCreate) and starts the retention.
inline constexpr const char* kUpdate = KIBITZ_LUA_ENDED_IN_CAPS R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local fin = redis.call('HGET', KEYS[1], 'finished_ms')
if fin and fin ~= '0' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
if ARGV[3] == '1' then
  local e = redis.call('HGET', KEYS[1], 'entry')
  if e then
    redis.call('XACK', KEYS[3], ARGV[1], e)
    redis.call('XDEL', KEYS[3], e)
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('INCR', KEYS[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[5])
  ended_in_caps(tonumber(ARGV[4]) + tonumber(ARGV[2]))
end
return 1
)lua";

// KEYS job, plies, stream. ARGV group. A job that could not be queued:
// gone, and out of its owner's sets.
inline constexpr const char* kRemove = R"lua(
local v = redis.call('HMGET', KEYS[1], 'entry', 'id', 'owner')
if v[1] then
  redis.call('XACK', KEYS[3], ARGV[1], v[1])
  redis.call('XDEL', KEYS[3], v[1])
end
if v[2] then
  local owner = v[3] or ''
  local pre = 'kibitz:owner:' .. string.len(owner) .. ':' .. owner
  redis.call('ZREM', pre .. ':open', v[2])
  redis.call('ZREM', pre .. ':jobs', v[2])
  redis.call('ZREM', 'kibitz:alljobs', v[2])
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
)lua";

// KEYS plies. ARGV ply, data, ttl_ms. A review's finished ply, kept as long
// as its job can live.
inline constexpr const char* kSavePly = R"lua(
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
)lua";

// KEYS job, stream, plies, finished counter. ARGV group, entry, consumer,
// max_attempts, now_ms, ttl_ms. The job of a stream entry just read or
// claimed: its record (marked running, "runs" counted), or nil when it is
// gone, finished, or the entry is not its current one (then the entry is
// acked and deleted). A job claimed max_attempts times already (> 0) and
// never finished took each instance that ran it down: it ends failed with
// code "crashed" instead, and the count of runs is returned (an integer).
inline constexpr const char* kClaim = KIBITZ_LUA_ENDED_IN_CAPS R"lua(
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
  redis.call('PEXPIRE', KEYS[4], 2592000000)  -- 30 days, as every counter (kCreate)
  ended_in_caps(tonumber(ARGV[5]) + tonumber(ARGV[6]))
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
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return 1
)lua";

// KEYS idempotency key. ARGV "JOB_ID FINGERPRINT", ttl_ms. Binds the key
// (nil), or returns what it is bound to and whether that job's hash exists.
inline constexpr const char* kBindKey = R"lua(
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return nil
end
local id = string.match(v, '^(%S+)') or ''
return {v, redis.call('EXISTS', 'kibitz:job:' .. id)}
)lua";

// KEYS idempotency key. ARGV job id. Deleted if it is bound to that job.
inline constexpr const char* kReleaseKey = R"lua(
local v = redis.call('GET', KEYS[1])
if v and string.match(v, '^(%S+)') == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
)lua";

#undef KIBITZ_LUA_ENDED_IN_CAPS

}  // namespace kibitz::server::store::redis_lua
