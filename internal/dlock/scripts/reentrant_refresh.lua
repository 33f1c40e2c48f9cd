-- reentrant_refresh: extend the lock, but only while this owner still holds
-- it, so that a late renewal never extends another owner's lock.
--
-- KEYS[1]  the lock key (a hash: owner -> holds)
-- ARGV[1]  the owner
-- ARGV[2]  the new TTL in milliseconds
--
-- Returns 1 if the owner holds it (its TTL is now at least ARGV[2]: never
-- shortened, since the owner's other holds may count on a longer one), 0 if
-- the key is gone or another owner's.
if redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then
  if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[2]) then
    redis.call("PEXPIRE", KEYS[1], ARGV[2])
  end
  return 1
end
return 0
