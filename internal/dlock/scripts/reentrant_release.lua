-- reentrant_release: give back one of the owner's holds; the last one
-- deletes the key and announces the release, so that waiters wake at once.
--
-- KEYS[1]  the lock key (a hash: owner -> holds)
-- ARGV[1]  the owner
-- ARGV[2]  the key's pub/sub channel, "dlock:released:<key>", to announce
--          the release on (the message is the owner), or "" to stay quiet
--
-- Returns the owner's holds left (0: the key is deleted), or -1 if the key
-- is gone or another owner's: nothing is touched then.
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 0 then
  return -1
end
local holds = redis.call("HINCRBY", KEYS[1], ARGV[1], -1)
if holds > 0 then
  return holds
end
redis.call("DEL", KEYS[1])
if ARGV[2] ~= "" then
  redis.call("PUBLISH", ARGV[2], ARGV[1])
end
return 0
