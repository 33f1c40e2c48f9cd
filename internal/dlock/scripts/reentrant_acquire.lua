-- reentrant_acquire: take the lock for an owner, or nest: an acquire by the
-- owner that already holds it counts one more hold instead of waiting.
-- Redisson's RLock, in the same commands.
--
-- KEYS[1]  the lock key: a hash of one field, the holder, whose value
--          counts its holds
-- ARGV[1]  the owner (the handles' token)
-- ARGV[2]  the TTL in milliseconds
--
-- Returns {1, holds} if the owner has it now (holds: its count, 1 for a
-- first hold), or {0, pttl} if another owner holds it: how long until that
-- key expires (-1: never), which is how long a waiter may have to sleep.
if redis.call("EXISTS", KEYS[1]) == 0 or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  local holds = redis.call("HINCRBY", KEYS[1], ARGV[1], 1)
  -- Extend, never shorten: the owner's other holds may count on a longer TTL.
  if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("PEXPIRE", KEYS[1], ARGV[2])
  end
  return {1, holds}
end
return {0, redis.call("PTTL", KEYS[1])}
