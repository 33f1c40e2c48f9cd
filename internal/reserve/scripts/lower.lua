-- lower: bring the stock down to at most a number, never up: after the
-- database refused a unit Redis had reserved, Redis must not go on
-- offering units the database does not have.
--
-- KEYS[1]  the stock key
-- ARGV[1]  the most units Redis may offer
--
-- Returns the units left (unchanged if already at most ARGV[1]), or -1 if
-- the stock key does not exist (nothing changed).
local left = redis.call("GET", KEYS[1])
if not left then
  return -1
end
if tonumber(left) > tonumber(ARGV[1]) then
  redis.call("SET", KEYS[1], ARGV[1])
  return tonumber(ARGV[1])
end
return tonumber(left)
