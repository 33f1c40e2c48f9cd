-- acquire in turns: the lock's own acquire script (lock, called below:
-- dlock's scripts/acquire.lua, which Turns pastes in as a function of its
-- own KEYS and ARGV), run only if no other room has been handed the turn.
-- A waiting room that is refused joins the key's turns, in the order it
-- first asked, to be handed the key when a release ends a run
-- (release.lua).
--
-- KEYS[1]  the key's turns: a sorted set of the waiting rooms, each scored
--          by when it first asked, the lock key followed by ":turns"
-- KEYS[2]  the turn handed out: the room the last release handed the key
--          to, for a moment, the lock key followed by ":next"
-- KEYS[3…] the lock's own KEYS
-- ARGV[1]  the asking room's id
-- ARGV[2]  "2" for a waiter in turns (it joins the turns when refused),
--          "1" for any other waiter (it joins them only if the key has
--          turns already: beside waiters in turns, a waiter that never
--          joined would never be handed the key), "0" for a one-off try
-- ARGV[3]  how long, in milliseconds, the turns outlive the last refusal
-- ARGV[4…] the lock's own ARGV
--
-- Returns {1, what lock returned} if the lock was taken (lock returns 0
-- for a refusal); {0, ms} if not, ms being 1 more than how long the turn
-- handed to another room has left (so at least 1, even in the turn's last
-- millisecond), or 0 if the key is simply held.
local turn = redis.call("GET", KEYS[2])
if not turn or turn == ARGV[1] then
  local got = lock({unpack(KEYS, 3)}, {unpack(ARGV, 4)})
  if got ~= 0 then
    if turn then
      redis.call("DEL", KEYS[2])
    end
    redis.call("ZREM", KEYS[1], ARGV[1])
    return {1, got}
  end
end
if ARGV[2] == "2" or (ARGV[2] == "1" and redis.call("EXISTS", KEYS[1]) == 1) then
  local now = redis.call("TIME")
  redis.call("ZADD", KEYS[1], "NX", tonumber(now[1]) * 1000000 + tonumber(now[2]), ARGV[1])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
if turn and turn ~= ARGV[1] then
  return {0, math.max(redis.call("PTTL", KEYS[2]), 0) + 1}
end
return {0, 0}
