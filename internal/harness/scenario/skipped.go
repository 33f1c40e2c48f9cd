package scenario

// Skipped is a row the run was asked for but could not run here, such as
// the zookeeper row where no ZooKeeper ensemble can be started: the
// report shows it as skipped, with Why, so that no row is silently
// missing.
type Skipped struct {
	Strategy Strategy
	// Why says what is missing and the command that runs the row.
	Why string
}

// skipError is an attack's way to tell Run that its row cannot run here:
// Run records the Skipped and goes on with the next row.
type skipError struct{ Skipped }

func (e *skipError) Error() string { return string(e.Strategy) + ": skipped: " + e.Why }
