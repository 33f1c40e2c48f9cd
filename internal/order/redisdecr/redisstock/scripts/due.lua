-- due: the reservations of a product that have fallen due by Redis's
-- clock, oldest first, for the sweep to settle: each is either sold (its
-- order is in the database) or given back. Nothing changes.
--
-- KEYS[1]  the ledger (see take)
-- ARGV[1]  the most reservations to return
--
-- Returns {reservations in the ledger, member, member, ...}: the count is
-- of all of them, due or not (0: nothing left to settle).
local now = redis.call("TIME")
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local due = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", ms, "LIMIT", 0, tonumber(ARGV[1]))
table.insert(due, 1, redis.call("ZCARD", KEYS[1]))
return due
