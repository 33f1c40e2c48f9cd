-- accept: take a buyer's units and queue the order, in one step. The
-- buyer is checked BEFORE anything is taken: a repeated click must be
-- refused without taking a unit. Everything the order needs to be written
-- later is in the stream entry, so the consumer that writes it asks Redis
-- nothing more.
--
-- KEYS[1]  the stock key: the units left, an integer (package redisstock's)
-- KEYS[2]  the buyers key: a hash from each buyer with a queued or
--          written order for the product to that order's id
-- KEYS[3]  the product's stream of queued orders
-- KEYS[4]  the status key: a hash from order id to "queued", or to
--          "refused:<code>:<message>" once the database refused it
-- ARGV[1]  the buyer
-- ARGV[2]  the quantity, 1 or more
-- ARGV[3]  the order's id (fresh, used once)
-- ARGV[4]  the order's creation time, in microseconds since 1970
-- ARGV[5]  the product's id (written into the entry)
--
-- Returns {1, units left after the order, the entry's id}, or, changing
-- nothing:
--   {-1, id}  the buyer already has order id for this product
--   {-2, 0}   fewer units left than asked for
--   {-3, 0}   the stock key does not exist: never loaded, or Redis lost it
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
redis.call("HSET", KEYS[2], ARGV[1], ARGV[3])
local now = redis.call("DECRBY", KEYS[1], q)
local entry = redis.call("XADD", KEYS[3], "*",
  "id", ARGV[3], "user", ARGV[1], "product", ARGV[5], "qty", ARGV[2], "created", ARGV[4])
redis.call("HSET", KEYS[4], ARGV[3], "queued")
return {1, now, entry}
