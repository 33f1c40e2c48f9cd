-- lower: bring the stock down to at most a number, never up: after the
-- database refused a unit Redis had reserved, Redis must not go on
-- offering units the database does not have.
--
-- A return puts units back in the database, then in Redis (return), so
-- a database stock read before a return may be one the return has
-- already raised Redis above. The caller reads the returns counter
-- before it reads the database; if it moved since, nothing changes.
--
-- KEYS[1]  the stock key
-- KEYS[2]  the returns counter (see return)
-- ARGV[1]  the most units Redis may offer
-- ARGV[2]  the returns counter as read before the database was
--
-- Returns the units left (unchanged if already at most ARGV[1]), -1 if
-- the stock key does not exist, or -2 if a return came in between
-- (nothing changed either way).
local left = redis.call("GET", KEYS[1])
if not left then
  return -1
end
if (tonumber(redis.call("GET", KEYS[2])) or 0) ~= tonumber(ARGV[2]) then
  return -2
end
if tonumber(left) > tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[1])
  return tonumber(ARGV[1])
end
return tonumber(left)
