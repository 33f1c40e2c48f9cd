-- turn: ask for a product's sweep turn, and say what the sweepers out of
-- turn need to know: how many reservations the ledger holds (none: they
-- may stop), and whether one of them is past its hold by more than a
-- margin (then the turns are not settling it, and every sweeper should).
--
-- KEYS[1]  the turn key
-- KEYS[2]  the ledger (see take)
-- ARGV[1]  how long the turn lasts, in ms
-- ARGV[2]  the margin, in ms: a reservation due longer ago than that is stuck
--
-- Returns {1 if the turn is the caller's (else 0), reservations in the
-- ledger, 1 if one of them is stuck (else 0)}.
local mine = redis.call("SET", KEYS[1], 1, "NX", "PX", tonumber(ARGV[1]))
local held = redis.call("ZCARD", KEYS[2])
local now = redis.call("TIME")
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local stuck = #redis.call("ZRANGEBYSCORE", KEYS[2], "-inf", ms - tonumber(ARGV[2]), "LIMIT", 0, 1)
return {mine and 1 or 0, held, stuck}
