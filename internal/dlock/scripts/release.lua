-- release: delete the lock, but only if this token still holds it, so that
-- a holder whose lock expired never deletes the next holder's lock; then
-- announce the release, so that waiters wake at once instead of polling
-- (package waitroom).
--
-- KEYS[1]  the lock key
-- ARGV[1]  the holder's token
-- ARGV[2]  the key's pub/sub channel, "dlock:released:<key>", to announce
--          the release on (the message is the token), or "" to stay quiet
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
