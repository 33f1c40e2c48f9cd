-- acquire: take the lock if it is free and no other process has been
-- handed the turn (see release.lua); a fenced lock also mints its fencing
-- token, the next value of a counter kept beside the lock key, in the same
-- script, so that no grant goes without a token and no refusal uses one
-- up. A waiting process that is refused joins the key's turns, in the
-- order it first asked, to be handed the key when a release ends a run.
--
-- KEYS[1]  the lock key
-- KEYS[2]  its turns: a sorted set of the waiting processes (rooms), each
--          scored by when it first asked, the lock key followed by ":turns"
-- KEYS[3]  the turn handed out: the room the last release handed the key
--          to, for a moment, the lock key followed by ":next"
-- KEYS[4]  (fenced only) the fence counter, the lock key followed by
--          ":fence"; it never expires, so that each grant's fence is above
--          every earlier one's
-- ARGV[1]  the holder's token
-- ARGV[2]  the TTL in milliseconds
-- ARGV[3]  the asking room's id
-- ARGV[4]  "2" for a waiter in turns (it joins the turns when refused),
--          "1" for any other waiter (it joins them only if the key has
--          turns already: beside waiters in turns, a waiter that never
--          joined would never be handed the key), "0" for a one-off try
-- ARGV[5]  how long, in milliseconds, the turns outlive the last refusal
--
-- Returns {1, fence} if the lock was taken (fence 0 without KEYS[4]);
-- {0, ms} if not, ms being 1 more than how long the turn handed to another
-- room has left (so at least 1, even in the turn's last millisecond), or 0
-- if the key is simply held.
local turn = redis.call("GET", KEYS[3])
if (not turn or turn == ARGV[3]) and redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  if turn then
    redis.call("DEL", KEYS[3])
  end
  redis.call("ZREM", KEYS[2], ARGV[3])
  if KEYS[4] then
    return {1, redis.call("INCR", KEYS[4])}
  end
  return {1, 0}
end
if ARGV[4] == "2" or (ARGV[4] == "1" and redis.call("EXISTS", KEYS[2]) == 1) then
  local now = redis.call("TIME")
  redis.call("ZADD", KEYS[2], "NX", tonumber(now[1]) * 1000000 + tonumber(now[2]), ARGV[3])
  redis.call("PEXPIRE", KEYS[2], ARGV[5])
end
if turn and turn ~= ARGV[3] then
  return {0, math.max(redis.call("PTTL", KEYS[3]), 0) + 1}
end
return {0, 0}
