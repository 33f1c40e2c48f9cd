package scenario

// The sale of a --crash run, and why (ForCrash puts it in, unless told
// otherwise):
//
//   - CrashModes: the rows that claim to stay exact through a shop's
//     death, the lock-free ones and the fenced ones. A killed holder of a
//     lua or redlock lock is a stall that never ends, which its TTL
//     already covers; off and naive oversell without any kill.
//   - CrashStock, 600 units: the lock-free rows sell one unit to nearly
//     every buyer's first click, about 125 a second at the default rate,
//     and sell 100 units out within the first second, before the first
//     kill. 600 units last about five seconds, past the kills at a third
//     and two thirds of the default crowd's six seconds of clicks: the
//     shops are killed while they sell. (The fenced rows sell more slowly,
//     and sell through the kills either way.)
const CrashStock = 600

// CrashModes are the rows --crash runs unless --modes is given.
func CrashModes() []Mode {
	return []Mode{"fenced", "sql-atomic", "redis-decr", "redis-queue", "fenced+batch"}
}

// ForCrash returns s with the sale a --crash run needs (CrashModes,
// CrashStock), keeping every setting for which given reports true; given
// is called with the flag's name: "modes", "stock".
func (s Settings) ForCrash(given func(flag string) bool) Settings {
	if !given("modes") {
		s.Modes = CrashModes()
	}
	if !given("stock") {
		s.Stock = CrashStock
	}
	return s
}
