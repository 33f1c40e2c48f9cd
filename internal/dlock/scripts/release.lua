-- release: delete the lock, but only if this token still holds it, so that
-- a holder whose lock expired never deletes the next holder's lock; then
-- announce the release, so that waiters wake at once instead of polling.
-- A lock with turns (lua and fenced, see acquire.lua) is also handed to the
-- process that has waited longest in them, if one does: for a moment only
-- that process may take it, and the release is announced even if it was
-- to be quiet, since nobody else may take it back.
--
-- KEYS[1]  the lock key
-- KEYS[2]  (lua, fenced) its turns, the lock key followed by ":turns"
-- KEYS[3]  (lua, fenced) the turn handed out, the lock key followed by
--          ":next"
-- ARGV[1]  the holder's token
-- ARGV[2]  the key's pub/sub channel, "dlock:released:<key>", to announce
--          the release on (the message is the token), or "" to stay quiet
--          (a release the waiting room holds back in the middle of a run)
-- ARGV[3]  (lua, fenced) how long, in milliseconds, a handed-out turn lasts
-- ARGV[4]  (lua, fenced) the key's channel, to announce a release that
--          hands the key on
--
-- Returns 0 if the key is gone or holds another token; 1 if it was
-- deleted; 2 if it was deleted and handed on (and announced).
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call("DEL", KEYS[1])
local handed = 0
if KEYS[2] then
  local next = redis.call("ZPOPMIN", KEYS[2])
  if next[1] then
    redis.call("SET", KEYS[3], next[1], "PX", ARGV[3])
    handed = 1
  end
end
if handed == 1 then
  redis.call("PUBLISH", ARGV[4], ARGV[1])
  return 2
end
if ARGV[2] ~= "" then
  redis.call("PUBLISH", ARGV[2], ARGV[1])
end
return 1
