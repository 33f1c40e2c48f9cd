-- give_back: undo one reservation, once. Running it twice, or for a
-- reservation that is not the buyer's current one, changes nothing, so a
-- caller may retry it, and a failed click never gives back the unit of
-- the same buyer's click that succeeded.
--
-- It also marks the reservation given back, for ARGV[4] ms, whether or
-- not it was held: a take whose sender gave up on it (its reply timed out)
-- can still reach Redis after this script has run, and must then reserve
-- nothing.
--
-- KEYS[1]  the stock key
-- KEYS[2]  the buyers key (buyer -> reservation id)
-- KEYS[3]  the reservation's given-back mark
-- ARGV[1]  the buyer
-- ARGV[2]  the quantity the reservation took
-- ARGV[3]  the reservation's id
-- ARGV[4]  how long the mark lasts, in ms
--
-- Returns the units left after giving back; -1 if that reservation is not
-- held (nothing changed); -2 if it was, but the stock key is gone (Redis
-- lost it): the reservation is dropped and the stock left missing, for the
-- next order to load from the database, rather than recreated as just the
-- units given back.
redis.call("SET", KEYS[3], "1", "PX", ARGV[4])
if redis.call("HGET", KEYS[2], ARGV[1]) ~= ARGV[3] then
  return -1
end
redis.call("HDEL", KEYS[2], ARGV[1])
if redis.call("EXISTS", KEYS[1]) == 0 then
  return -2
end
return redis.call("INCRBY", KEYS[1], ARGV[2])
