-- return: put an ended order's units back on sale in Redis, once. The
-- order ended (expired or cancelled) in the database first, which gave the
-- units back there and recorded that Redis is owed them; this pays Redis.
-- Running it twice, from a retry or from another shop's sweep after a
-- crash, changes nothing more: the order's id in the returned set says it
-- ran.
--
-- It also lets the buyer buy again (removes them from the buyers, if that
-- order is still theirs there), and counts the return, so that a
-- lowering to a database stock read before it refuses to run (lower).
--
-- KEYS[1]  the stock key
-- KEYS[2]  the buyers key (buyer -> reservation or order id)
-- KEYS[3]  the returned set: the ids of the orders returned
-- KEYS[4]  the returns counter
-- ARGV[1]  the buyer
-- ARGV[2]  the quantity
-- ARGV[3]  the order's id
--
-- Returns the units left after the return; -1 if the order was returned
-- already (nothing changed); -2 if the stock key is gone (Redis lost it):
-- nothing changes, and the return stays owed, for the load that sets the
-- stock from the database (load) to mark it returned, or, if that load
-- read the database before the order ended, for a send after it.
if redis.call("SISMEMBER", KEYS[3], ARGV[3]) == 1 then
  return -1
end
if redis.call("EXISTS", KEYS[1]) == 0 then
  return -2
end
redis.call("SADD", KEYS[3], ARGV[3])
redis.call("INCR", KEYS[4])
if redis.call("HGET", KEYS[2], ARGV[1]) == ARGV[3] then
  redis.call("HDEL", KEYS[2], ARGV[1])
end
return redis.call("INCRBY", KEYS[1], ARGV[2])
