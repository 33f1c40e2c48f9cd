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

// redis-decr's group commit: the orders Redis let through are written in
// groups, one transaction per group, so that the hot row is taken once per
// group instead of once per order. Redis has decided who gets a unit; the
// database only has to record it, and a group costs it one conditional
// UPDATE and one multi-row INSERT, however many orders it holds.
//
// Nothing waits to fill a group. In each shop, one goroutine per product
// (the writer) writes what is queued, and the orders that arrive while it
// writes are the next group: one order alone when the shop is quiet, more
// when the database is the bottleneck. Each buyer waits for its group's
// answer, as it would for its own transaction.
//
// A group is all or nothing: if the database refuses any of it (a buyer
// with an order Redis forgot, units Redis offered that the database does
// not have, or a sweep since a reservation was made), the group rolls back
// and each of its orders is written alone (writeReserved), which tells
// those cases apart. If its COMMIT fails, every order of the group is in
// doubt together, and each buyer asks the database after its own
// (orderdb.Writer.AfterFailure).

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

// writeGrouped writes o, reserved after seen was read, in the next group
// commit of its product, and returns when that group's transaction has
// ended. Its errors are writeReserved's and commit's, or errWriteAlone (the
// caller writes o alone), or errLeftEarly when ctx ended before o joined a
// group. Once o has joined a group, writeGrouped waits for the group's
// answer even if ctx ends: the order may be written, unless every buyer in
// the group has gone (groupContext). Safe for concurrent use.
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
		// made (write.go says why one count will do).
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

// groupContext is the context of a group's transaction: it ends when
// every buyer in the group has gone (their contexts ended: nobody waits
// for the write, and it rolls back as one order's would), or at the latest
// of their deadlines, a buyer without one counting as groupWriteTimeout
// from now. Its values are the first buyer's.
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
