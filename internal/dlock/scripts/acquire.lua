-- acquire: SET key token NX PX ttl; a fenced lock also mints its fence in
-- the same script, so no grant goes without one and no refusal uses one up.
--
-- KEYS[1]  the lock key
-- KEYS[2]  (fenced only) the fence counter, "<key>:fence"; never expires
-- ARGV[1]  the holder's token
-- ARGV[2]  the TTL in milliseconds
--
-- Returns 0 if the key is held; if it was taken, the fence (fenced: Lua.try
-- keeps it as Lock.Fence, which order's registerFence has the database
-- check), or 1.
if not redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return 0
end
if KEYS[2] then
  return redis.call("INCR", KEYS[2])
end
return 1
