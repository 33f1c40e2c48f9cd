-- fenced_acquire: take the lock and, only if that worked, mint its fencing
-- token, the next value of a counter kept beside the lock key. One script,
-- so that no grant goes without a token and no refusal uses one up.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fence counter, the lock key followed by ":fence"; it never
--          expires, so that each grant's fence is above every earlier one's
-- ARGV[1]  the holder's token
-- ARGV[2]  the TTL in milliseconds
--
-- Returns the new fence (1 or more) if the lock was taken, 0 if the key is
-- held (the counter is untouched then).
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2])
end
return 0
