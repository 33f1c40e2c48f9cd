-- refresh: PEXPIRE the lock only if this token still holds it.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the holder's token
-- ARGV[2]  the new TTL in milliseconds
--
-- Returns 1 if extended, 0 if the key is gone or holds another token.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
