-- load: set a stock Redis does not have (it restarted empty, or failed
-- over to a replica without it) from the database, with the returns the
-- database already counts and Redis has not yet been paid (owed). Both
-- were read in one database snapshot: the stock includes those returns,
-- so their ids go in the returned set, and a return still on its way
-- (return) finds its id there and adds nothing twice. It moves the
-- returns counter too, to Redis's clock in microseconds, a value no read
-- of it before the loss can hold (counting up from a lost counter's 0
-- could repeat one): a lowering to a database stock read before this
-- load, and so perhaps before a return it counts, refuses to run (lower).
--
-- KEYS[1]  the stock key
-- KEYS[2]  the returned set (see return)
-- KEYS[3]  the returns counter (see return)
-- ARGV[1]  the stock, as the database has it
-- ARGV[2…] the ids of the orders whose returns the stock includes and
--          Redis may not have
--
-- Returns 1 if it set the stock, 0 if Redis had one (nothing changed).
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1])
local now = redis.call("TIME")
redis.call("SET", KEYS[3], now[1] * 1000000 + now[2])
for i = 2, #ARGV do
  redis.call("SADD", KEYS[2], ARGV[i])
end
return 1
