-- take: reserve units of a product for one buyer, in one round trip. The
-- buyer is checked BEFORE anything is decremented: a repeated click must
-- not take a second unit and then be refused (a unit would leak).
--
-- A reservation made is also written to the product's ledger, scored by
-- the time it falls due by Redis's own clock (TIME, so the shops' clocks
-- never matter): now plus ARGV[4]. Past that, a sweep may give it back if
-- its order was never written (the shop that made it died, or is too
-- slow); the database decides which (internal/order/redisdecr/reclaim.go).
--
-- KEYS[1]  the stock key: the units left, an integer
-- KEYS[2]  the buyers key: a hash from each buyer holding a reservation
--          (or an order) for the product to that reservation's id
-- KEYS[3]  the reservation's given-back mark, set by give_back
-- KEYS[4]  the ledger: a sorted set of the reservations, by when they fall due
-- ARGV[1]  the buyer
-- ARGV[2]  the quantity, 1 or more
-- ARGV[3]  the reservation's id (the order id it is for)
-- ARGV[4]  how long the reservation is held before it falls due, in ms
-- ARGV[5]  the reservation's member in the ledger (id, quantity and buyer)
--
-- Returns {1, units left after the reservation}, or, changing nothing:
--   {-1, id}  the buyer already holds reservation id
--   {-2, 0}   fewer units left than asked for
--   {-3, 0}   the stock key does not exist: never loaded, or Redis lost it
--   {-4, 0}   the reservation was given back before it was made: this
--             take is a late copy of a request its sender gave up on
if redis.call("EXISTS", KEYS[3]) == 1 then
  return {-4, 0}
end
local left = redis.call("GET", KEYS[1])
if not left then
  return {-3, 0}
end
local held = redis.call("HGET", KEYS[2], ARGV[1])
if held then
  return {-1, held}
end
local q = tonumber(ARGV[2])
if tonumber(left) < q then
  return {-2, 0}
end
local now = redis.call("TIME")
local due = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[4])
redis.call("HSET", KEYS[2], ARGV[1], ARGV[3])
redis.call("ZADD", KEYS[4], due, ARGV[5])
return {1, redis.call("DECRBY", KEYS[1], q)}
