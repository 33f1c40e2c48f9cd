-- refused: the database refused an entry's order for good (the product
-- was deleted, or it has fewer units than Redis thought): dead-letter it.
-- Its units go back to the stock, its status becomes "refused" with the
-- reason, and the entry is acknowledged and deleted. Only the call that
-- acknowledges the entry does any of that, so running it twice, or after
-- another consumer wrote or refused the same entry, gives nothing back
-- twice.
--
-- KEYS[1]  the stock key
-- KEYS[2]  the buyers key (buyer -> order id)
-- KEYS[3]  the product's stream
-- KEYS[4]  the status key (order id -> status)
-- ARGV[1]  the consumer group
-- ARGV[2]  the entry's id
-- ARGV[3]  the buyer
-- ARGV[4]  the order's id
-- ARGV[5]  the quantity
-- ARGV[6]  the status: "refused:<code>:<message>"
--
-- Returns 1 if this call dead-lettered the entry, 0 if it was no longer
-- pending (nothing changed).
if redis.call("XACK", KEYS[3], ARGV[1], ARGV[2]) == 0 then
  return 0
end
redis.call("XDEL", KEYS[3], ARGV[2])
redis.call("HSET", KEYS[4], ARGV[4], ARGV[6])
if redis.call("HGET", KEYS[2], ARGV[3]) == ARGV[4] then
  redis.call("HDEL", KEYS[2], ARGV[3])
  if redis.call("EXISTS", KEYS[1]) == 1 then
    redis.call("INCRBY", KEYS[1], ARGV[5])
  end
end
return 1
