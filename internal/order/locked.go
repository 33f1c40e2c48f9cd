package order

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// placeLocked is the order flow of the locking strategies (off, naive, lua,
// redlock, fenced, etcd, zookeeper), in the steps numbered below after Place's.
func (s *Service) placeLocked(ctx context.Context, p stock.Product, req Request) (_ Order, err error) {
	lockers, err := s.lockersFor(p.Strategy)
	if err != nil {
		return Order{}, err
	}
	if p.BatchMax > 0 && p.Strategy.Batches() {
		// 4-7 for many buyers at once, under one lock (batch.go).
		// The shops' leaders take the lock in turns: in a race, one of
		// three can lose it a dozen batches in a row (dlock.InTurns).
		return s.placeBatched(ctx, p, req, dlock.InTurns(lockers.product))
	}
	// 4. Dedupe lock, one try: if it is held, this buyer's order is in flight.
	dedupe, err := lockers.dedupe.TryLock(ctx, dedupeKey(p.ID, req.UserID), s.dedupeTTL(p))
	if err != nil {
		return Order{}, fromLock(err, "dedupe lock")
	}
	defer func() { s.letGo(ctx, p, dedupe, err) }() // 7b. last, after the product lock
	// 5. Product lock, waiting at most the lock wait for the buyers ahead.
	lock, err := s.lockProduct(ctx, lockers.product, p)
	if err != nil {
		return Order{}, err
	}
	got := time.Now()
	defer func() { s.releaseProduct(ctx, p, lock, got, err) }() // 7a. first
	// 6. Critical section on the lock's context: a watchdog (lua, fenced,
	// redlock, etcd, zookeeper) ends it when the lock is lost, and the
	// transaction rolls back. Off's and naive's never ends: a holder past its
	// TTL goes on, which is how naive oversells.
	o, err := s.buy(lock.Context(), lock, p, req)
	if err != nil {
		return Order{}, s.fromCritical(ctx, lock.Context(), p, err)
	}
	// 7. Release the product lock, then the dedupe lock (the defers above).
	return o, nil
}

// buy is the critical section of one buyer: sell, to one buyer. It must
// run holding lock, the product lock, on ctx, the lock's context (a test
// may pass another, to play a holder that does not know its lease ran out).
//
// Without a fence it reads the stock with a plain SELECT outside the
// transaction and works before it: read-check-write, on purpose. Only the
// product lock keeps two buyers from both reading n and writing n-1. A lost
// lock rolls the transaction back through ctx; a commit already on its way
// (commit_late.go) only a fence stops, which is why a fenced sale reads
// inside its transaction, after registering (locked_fence.go).
func (s *Service) buy(ctx context.Context, lock *dlock.Lock, p stock.Product, req Request) (Order, error) {
	reqs := []Request{req}
	var read *shelf
	if fenceOf(lock).none() {
		sh, err := s.look(ctx, s.db, p.ID, usersOf(reqs))
		if err != nil {
			return Order{}, err
		}
		if err := refuse(req, sh.left, sh.bought); err != nil {
			return Order{}, err
		}
		if err := s.work(ctx, p); err != nil {
			return Order{}, err
		}
		read = &sh
	}
	answers, err := s.sell(ctx, lock, p, reqs, nil, read)
	if err != nil {
		return Order{}, err
	}
	return answers[0].order, answers[0].err
}

// writeStock writes product p's stock in tx: left, an absolute value the
// seller computed from its read, so two sellers that read the same n with
// no lock between them both write n-1 (how off and naive oversell). Under
// a fence it checks that the token registered is still f: nobody can have
// replaced it while tx holds the row, but the write should say what it
// relies on.
func (s *Service) writeStock(ctx context.Context, tx *gorm.DB, p stock.Product, left int, f fence) error {
	if f.none() {
		return tx.Exec("UPDATE products SET stock = ? WHERE id = ?", left, p.ID).Error
	}
	res := tx.Exec("UPDATE products SET stock = ? WHERE id = ? AND fence_epoch = ? AND fence = ?",
		left, p.ID, f.epoch, f.token)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return s.fencedOut(ctx, tx, p, f)
	}
	return nil
}

// dedupeTTL is the dedupe lock's TTL: the lock wait plus one product-lock
// TTL, so that it outlives a request queued for the product lock even where
// nothing renews it (naive).
func (s *Service) dedupeTTL(p stock.Product) time.Duration {
	return s.opts.LockWait + p.LockTTL
}
