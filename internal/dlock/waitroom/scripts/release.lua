-- release in turns: the lock's own release script (release, called below:
-- dlock's scripts/release.lua, which Turns pastes in as a function of its
-- own KEYS and ARGV), kept quiet; then, if it let go and a room waits in
-- the key's turns, the key is handed to the one that has waited longest:
-- for that room's hand-off window only it may take it, and the release is
-- announced even if it was to be quiet, since nobody else may take it
-- back.
--
-- KEYS[1]  the key's turns, the lock key followed by ":turns" (each room
--          scored by its place times 1000 plus its window: acquire.lua;
--          an older binary's room, not named "w:…", by its place in µs)
-- KEYS[2]  the turn handed out, the lock key followed by ":next"
-- KEYS[3]  the lock key
-- ARGV[1]  the holder's token
-- ARGV[2]  the key's pub/sub channel, "dlock:released:<key>"
-- ARGV[3]  "1" to stay quiet unless the key is handed on (a release the
--          waiting room holds back in the middle of a run), "0" to announce
-- ARGV[4]  how long, in milliseconds, a handed-out turn lasts at least
--
-- Returns 0 if the key is gone or holds another token; 1 if it was
-- released; 2 if it was released and handed on (and announced).
if release({KEYS[3]}, {ARGV[1], ""}) == 0 then
  return 0
end
local next = redis.call("ZPOPMIN", KEYS[1])
if next[1] then
  local window = tonumber(ARGV[4])
  if string.sub(next[1], 1, 2) == "w:" then
    window = math.max(tonumber(next[2]) % 1000, window)
  end
  redis.call("SET", KEYS[2], next[1], "PX", window)
  redis.call("PUBLISH", ARGV[2], ARGV[1])
  return 2
end
if ARGV[3] == "0" then
  redis.call("PUBLISH", ARGV[2], ARGV[1])
end
return 1
