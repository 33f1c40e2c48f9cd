-- give_back: undo one reservation, once. Running it twice, or for a
-- reservation that is not the buyer's current one, changes nothing, so a
-- caller may retry it, and a failed click never gives back the unit of
-- the same buyer's click that succeeded. The shop whose order failed and
-- the sweep that found the reservation stale may both run it: one gives
-- the units back, the other finds nothing held.
--
-- A reservation not held is marked given back, for ARGV[4] ms: its take
-- may not have reached Redis yet (its sender gave up on the reply, and the
-- request is still on the wire), and must then reserve nothing. A held one
-- needs no mark: its take has run, and a take is sent once. Only that
-- branch writes the mark, and after the read: a Redis at its maxmemory
-- refuses a script whose first write is a command that may grow memory
-- (SET), and a held reservation must still be given back then (HDEL,
-- ZREM and INCRBY after them are allowed). Either way the reservation
-- leaves the ledger.
--
-- KEYS[1]  the stock key
-- KEYS[2]  the buyers key (buyer -> reservation id)
-- KEYS[3]  the reservation's given-back mark
-- KEYS[4]  the ledger (see take)
-- ARGV[1]  the buyer
-- ARGV[2]  the quantity the reservation took
-- ARGV[3]  the reservation's id
-- ARGV[4]  how long the mark lasts, in ms
-- ARGV[5]  the reservation's member in the ledger
--
-- Returns the units left after giving back; -1 if that reservation is not
-- held (nothing changed but its mark, and the ledger); -2 if it was, but
-- the stock key is gone (Redis lost it): the reservation is dropped and
-- the stock left missing, for the next order to load from the database,
-- rather than recreated as just the units given back.
if redis.call("HGET", KEYS[2], ARGV[1]) ~= ARGV[3] then
  redis.call("SET", KEYS[3], "1", "PX", ARGV[4])
  redis.call("ZREM", KEYS[4], ARGV[5])
  return -1
end
redis.call("HDEL", KEYS[2], ARGV[1])
redis.call("ZREM", KEYS[4], ARGV[5])
if redis.call("EXISTS", KEYS[1]) == 0 then
  return -2
end
return redis.call("INCRBY", KEYS[1], ARGV[2])
