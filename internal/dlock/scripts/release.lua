-- release: DEL the lock only if this token still holds it (an expired
-- holder never deletes the next one's), then announce it on ARGV[2] unless
-- that is "". Only redlock, on each node, passes a channel: lua and fenced
-- run this inside waitroom's scripts/release.lua with "", which announces.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the holder's token
-- ARGV[2]  the key's channel, "dlock:released:<key>", to PUBLISH the token
--          on, or "" to stay quiet
--
-- Returns 1 if deleted, 0 if the key is gone or holds another token.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call("DEL", KEYS[1])
if ARGV[2] ~= "" then
  redis.call("PUBLISH", ARGV[2], ARGV[1])
end
return 1
