-- acquire: SET key token NX PX ttl. The key is set only if nobody holds
-- it, to this acquisition's own token, and expires after the TTL. A fenced
-- lock also mints its fencing token, the next value of a counter kept
-- beside the key, in the same script: no grant goes without a token, and
-- no refusal uses one up.
--
-- KEYS[1]  the lock key
-- KEYS[2]  (fenced only) the fence counter, the lock key followed by
--          ":fence"; it never expires, so that each grant's fence is above
--          every earlier one's
-- ARGV[1]  the holder's token
-- ARGV[2]  the TTL in milliseconds
--
-- Returns 0 if the key is held; if it was taken, the fence (fenced), or 1.
if not redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return 0
end
if KEYS[2] then
  return redis.call("INCR", KEYS[2])
end
return 1
