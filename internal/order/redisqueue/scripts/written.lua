-- written: the orders of some entries are in the database; acknowledge
-- the entries, delete them from the stream, and forget their "queued"
-- status (the database answers for them now). Running it again changes
-- nothing more.
--
-- KEYS[1]  the product's stream
-- KEYS[2]  the status key (order id -> status)
-- ARGV[1]  the consumer group
-- ARGV[2]  how many entries follow, n
-- ARGV[3 .. 2+n]      the entries' ids
-- ARGV[3+n .. 2+2n]   their orders' ids, in the same order
--
-- Returns how many entries were still pending (acknowledged by this call).
local n = tonumber(ARGV[2])
local entries, orders = {}, {}
for i = 1, n do
  entries[i] = ARGV[2 + i]
  orders[i] = ARGV[2 + n + i]
end
local acked = redis.call("XACK", KEYS[1], ARGV[1], unpack(entries))
redis.call("XDEL", KEYS[1], unpack(entries))
redis.call("HDEL", KEYS[2], unpack(orders))
return acked
