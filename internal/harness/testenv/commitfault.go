package testenv

import (
	"sync"
	"sync/atomic"
	"time"
)

// CommitFault loses the answers of COMMITs on a pool opened with
// TestDB.OpenPool, and of CALLs, which commit in the server (see call):
// the COMMIT lands, and the client is told the connection was reset, as when a connection dies between the server's commit and its
// reply. Only asking the database again tells the client that its
// transaction is there. Its methods are safe for concurrent use.
type CommitFault struct {
	stop     func() // the database's Stop
	lose     atomic.Bool
	thenStop atomic.Bool
	lost     atomic.Int64

	loseEarly atomic.Int64   // nanoseconds: the next COMMIT lands this long after its answer was lost
	landing   sync.WaitGroup // COMMITs still landing
}

// LoseNextAnswer makes the next COMMIT on the pool that lands fail with a
// connection reset (ECONNRESET) instead of succeeding. With stop, the
// database is also stopped, as by TestDB.Stop, right after that COMMIT
// landed: until TestDB.Start nobody can ask whether it did.
func (f *CommitFault) LoseNextAnswer(stop bool) {
	f.thenStop.Store(stop)
	f.lose.Store(true)
}

// Lost returns how many COMMIT answers f has lost.
func (f *CommitFault) Lost() int64 { return f.lost.Load() }

// landed is told that a COMMIT landed; it returns the error its client
// gets instead of success, nil if f loses nothing.
func (f *CommitFault) landed() error {
	if f == nil || !f.lose.CompareAndSwap(true, false) {
		return nil
	}
	f.lost.Add(1)
	if f.thenStop.Load() {
		f.stop()
	}
	return errAnswerLost
}

// LoseNextAnswerEarly makes the next COMMIT on the pool fail at once with
// a connection reset while the server is still working on it: it lands d
// later, as when the client's connection dies during a slow fsync. Until
// then its transaction holds what it holds (MySQL's row locks, SQLite's
// write lock), and its connection is thrown away after. Wait waits for
// it to land.
func (f *CommitFault) LoseNextAnswerEarly(d time.Duration) { f.loseEarly.Store(int64(d)) }

// Wait waits until every COMMIT whose answer was lost early has landed.
func (f *CommitFault) Wait() { f.landing.Wait() }

// early is told that tx is about to commit: if f loses this answer early,
// it lands tx's COMMIT in the background and reports true.
func (f *CommitFault) early(tx *faultTx) bool {
	if f == nil {
		return false
	}
	d := time.Duration(f.loseEarly.Swap(0))
	if d <= 0 {
		return false
	}
	f.lost.Add(1)
	p := make(chan struct{})
	tx.conn.pending = p
	f.landing.Add(1)
	go func() {
		defer f.landing.Done()
		defer close(p)
		t := time.NewTimer(d)
		defer t.Stop()
		<-t.C
		_ = tx.inner.Commit() // the server had it: it lands
	}()
	return true
}

// call is told that conn is about to send a CALL, a statement that commits
// in the server (a stored procedure's COMMIT, such as sql-one-trip's
// sale), whose answer f loses as a COMMIT's. It returns nil if f loses
// nothing, and the caller sends the CALL. Else run sends it: now, and the
// CALL landed (LoseNextAnswer); or d later, in the background, as a CALL
// still on its way to the server when its client heard "connection
// reset" (LoseNextAnswerEarly), its connection thrown away after. Either
// way the client gets a connection reset.
func (f *CommitFault) call(conn *faultConn, run func() error) error {
	if f == nil {
		return nil
	}
	if d := time.Duration(f.loseEarly.Swap(0)); d > 0 {
		f.lost.Add(1)
		p := make(chan struct{})
		conn.pending = p
		f.landing.Add(1)
		go func() {
			defer f.landing.Done()
			defer close(p)
			t := time.NewTimer(d)
			defer t.Stop()
			<-t.C
			_ = run()
		}()
		return errAnswerLost
	}
	if !f.lose.Load() {
		return nil
	}
	if err := run(); err != nil {
		return err
	}
	return f.landed()
}
