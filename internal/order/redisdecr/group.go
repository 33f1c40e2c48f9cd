package redisdecr

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/order/orderdb"
	"github.com/flashsale/flashsale/internal/stock"
)

// redis-decr's group commit: Redis has decided who gets a unit, so the
// database only records it, one transaction per group of orders (one
// conditional UPDATE, one multi-row INSERT), taking the hot row once per
// group. Nothing waits to fill a group: one writer goroutine per product
// and shop writes what is queued, and what arrives meanwhile is the next
// group. A group is all or nothing: if the database refuses any of it, it
// rolls back and each order is written alone (writeReserved), which tells
// the cases apart; a failed COMMIT leaves every order in doubt, and each
// buyer asks after its own (orderdb.Writer.AfterFailure).

// maxGroup is the most orders one group commit writes.
const maxGroup = 64

// groupWriteTimeout bounds a group's transaction when a buyer in it has no
// deadline of its own.
const groupWriteTimeout = 10 * time.Second

// errWriteAlone is a group's answer to each of its orders when the
// database refused the group: write the order alone.
var errWriteAlone = errors.New("order: the group was refused; write the order alone")

// errLeftEarly is the answer to a buyer whose context ended before its
// order joined a group: nothing was sent to the database.
var errLeftEarly = errors.New("order: the buyer left before the write")

// writeGroup is one product's orders waiting in this shop for a group
// commit, and whether a writer serves them.
type writeGroup struct {
	mu      sync.Mutex
	waiting []*groupedWrite
	writing bool // a writer goroutine runs for this product
}

// groupedWrite is one order in a writeGroup.
type groupedWrite struct {
	o    orderdb.Order
	seen int64 // reclaimsSeen before the reservation
	ctx  context.Context
	// taken is set by the writer when the order joins a group, or by its
	// buyer when it withdraws first; whoever sets it first decides.
	taken atomic.Bool
	done  chan error // buffered: the writer never blocks on it
}

// writeGrouped writes o, reserved after seen was read, in its product's
// next group commit, and returns when that transaction has ended. Errors:
// writeReserved's and commit's, errWriteAlone (write o alone), or
// errLeftEarly when ctx ended before o joined a group; once joined, it
// waits for the answer even if ctx ends. Safe for concurrent use.
func (s *Seller) writeGrouped(ctx context.Context, p stock.Product, o orderdb.Order, seen int64) error {
	w := &groupedWrite{o: o, seen: seen, ctx: ctx, done: make(chan error, 1)}
	v, _ := s.groups.LoadOrStore(p.ID, new(writeGroup))
	g := v.(*writeGroup)
	g.mu.Lock()
	g.waiting = append(g.waiting, w)
	start := !g.writing
	g.writing = true
	g.mu.Unlock()
	if start {
		s.writers.Add(1)
		go s.writeGroups(p, g)
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		if w.taken.CompareAndSwap(false, true) {
			return errLeftEarly
		}
		return <-w.done
	}
}

// writeGroups is a product's writer: it writes groups until nobody waits.
func (s *Seller) writeGroups(p stock.Product, g *writeGroup) {
	defer s.writers.Done()
	for {
		group := g.next()
		if group == nil {
			return
		}
		err := s.commitGroup(p, group)
		if err == nil {
			s.opts.Grouped(len(group))
		}
		for _, w := range group {
			w.done <- err
		}
	}
}

// next takes up to maxGroup waiting orders whose buyers have not gone; nil
// if none waits, and then the writer stops (the next order starts another).
func (g *writeGroup) next() []*groupedWrite {
	g.mu.Lock()
	defer g.mu.Unlock()
	var group []*groupedWrite
	for len(g.waiting) > 0 && len(group) < maxGroup {
		w := g.waiting[0]
		g.waiting[0] = nil
		g.waiting = g.waiting[1:]
		if w.taken.CompareAndSwap(false, true) {
			group = append(group, w)
		}
	}
	if len(group) == 0 {
		g.writing = false
	}
	return group
}

// commitGroup writes group in one transaction, on a context that lasts as
// long as a buyer in it is still there (groupContext). A group of one is
// written as writeReserved writes it.
func (s *Seller) commitGroup(p stock.Product, group []*groupedWrite) error {
	ctx, cancel := groupContext(group)
	defer cancel()
	if len(group) == 1 {
		w := group[0]
		return s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error { return s.writeReserved(tx, w.o, w.seen) })
	}
	rows := make([]orderdb.Row, len(group))
	total, oldest := 0, group[0].seen
	for i, w := range group {
		rows[i] = orderdb.UniqueRowOf(w.o)
		total += w.o.Quantity
		oldest = min(oldest, w.seen)
	}
	return s.w.Commit(ctx, nil, p, func(tx *gorm.DB) error {
		if err := tx.Create(&rows).Error; err != nil {
			if stock.IsDuplicateKey(err) {
				return errWriteAlone
			}
			return err
		}
		// reclaims has not moved since the oldest reservation's seen was
		// read, so no sweep has reclaimed any of the group's since it was
		// made (reclaim.go says why one count will do).
		res := tx.Exec(takeUnswept, total, p.ID, total, oldest)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return errWriteAlone
		}
		return nil
	})
}

// groupContext is the context of a group's transaction: it ends when every
// buyer in the group has gone (it rolls back as one order's would), or at
// the latest of their deadlines (groupWriteTimeout for a buyer without).
// Its values are the first buyer's.
func groupContext(group []*groupedWrite) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, w := range group {
		d, ok := w.ctx.Deadline()
		if !ok {
			d = time.Now().Add(groupWriteTimeout)
		}
		if d.After(latest) {
			latest = d
		}
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(group[0].ctx), latest)
	var here atomic.Int64
	here.Store(int64(len(group)))
	stops := make([]func() bool, len(group))
	gone := 0
	for i, w := range group {
		stops[i] = context.AfterFunc(w.ctx, func() {
			if here.Add(-1) == 0 {
				cancel()
			}
		})
		if w.ctx.Err() != nil {
			gone++
		}
	}
	if gone == len(group) { // now, not when the AfterFuncs' goroutines run
		cancel()
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
