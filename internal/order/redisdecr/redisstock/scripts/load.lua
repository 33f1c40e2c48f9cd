-- load: set a stock Redis does not have (it restarted empty, or failed
-- over to a replica without it) from the database, with the returns the
-- database already counts and Redis has not yet been paid (owed). Both
-- were read in one database snapshot: the stock includes those returns,
-- so their ids go in the returned set, and a return still on its way
-- (return) finds its id there and adds nothing twice.
--
-- KEYS[1]  the stock key
-- KEYS[2]  the returned set (see return)
-- ARGV[1]  the stock, as the database has it
-- ARGV[2…] the ids of the orders whose returns the stock includes and
--          Redis may not have
--
-- Returns 1 if it set the stock, 0 if Redis had one (nothing changed).
if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1])
for i = 2, #ARGV do
  redis.call("SADD", KEYS[2], ARGV[i])
end
return 1
