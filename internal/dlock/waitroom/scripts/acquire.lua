-- acquire in turns: the lock's own acquire script (lock, called below:
-- dlock's scripts/acquire.lua, which Turns pastes in as a function of its
-- own KEYS and ARGV), run only if no other room has been handed the turn.
-- A waiting room that is refused joins the key's turns, in the order it
-- first asked, to be handed the key when a release ends a run
-- (release.lua).
--
-- KEYS[1]  the key's turns: a sorted set of the waiting rooms, the lock key
--          followed by ":turns"; each is scored by its place in line (when
--          it first asked, in milliseconds) times 1000, plus the hand-off
--          window it asked for (in milliseconds, under 1000): a release
--          hands the key to the lowest score, for that room's window
-- KEYS[2]  the turn handed out: the room the last release handed the key
--          to, for a moment, the lock key followed by ":next"
-- KEYS[3…] the lock's own KEYS
-- ARGV[1]  the asking room's id
-- ARGV[2]  "2" for a waiter in turns (it joins the turns when refused),
--          "1" for any other waiter (it joins them only if the key has
--          turns already: beside waiters in turns, a waiter that never
--          joined would never be handed the key), "0" for a one-off try
-- ARGV[3]  how long, in milliseconds, the turns outlive the last refusal
-- ARGV[4]  the room's place in line, as an earlier refusal returned it, or
--          "0": a room whose turn lapsed before its acquire arrived is no
--          longer in the turns, and joins them again at its old place
-- ARGV[5]  the room's hand-off window, in milliseconds (under 1000)
-- ARGV[6…] the lock's own ARGV
--
-- Returns {1, what lock returned} if the lock was taken (lock returns 0
-- for a refusal); {0, ms, place} if not, ms being 1 more than how long the
-- turn handed to another room has left (so at least 1, even in the turn's
-- last millisecond), or 0 if the key is simply held, and place the room's
-- place in the turns (0 if it is not in them).
local turn = redis.call("GET", KEYS[2])
if not turn or turn == ARGV[1] then
  local got = lock({unpack(KEYS, 3)}, {unpack(ARGV, 6)})
  if got ~= 0 then
    if turn then
      redis.call("DEL", KEYS[2])
    end
    redis.call("ZREM", KEYS[1], ARGV[1])
    return {1, got}
  end
end
local place = 0
if ARGV[2] == "2" or (ARGV[2] == "1" and redis.call("EXISTS", KEYS[1]) == 1) then
  -- Its place: the one it holds, else the one it brings, else now.
  local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
  if score then
    place = math.floor(tonumber(score) / 1000)
  elseif ARGV[4] ~= "0" then
    place = tonumber(ARGV[4])
  else
    local now = redis.call("TIME")
    place = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
    -- A newcomer queues behind the last in line, even if Redis's clock
    -- stepped back since that one joined.
    local last = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
    if last[2] then
      place = math.max(place, math.floor(tonumber(last[2]) / 1000) + 1)
    end
  end
  redis.call("ZADD", KEYS[1], place * 1000 + tonumber(ARGV[5]), ARGV[1])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
if turn and turn ~= ARGV[1] then
  return {0, math.max(redis.call("PTTL", KEYS[2]), 0) + 1, place}
end
return {0, 0, place}
