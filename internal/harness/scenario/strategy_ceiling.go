package scenario

import (
	"fmt"
	"strings"

	"github.com/flashsale/flashsale/internal/netsim"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Ceiling is the most orders per second m's product can sell at s's RTT
// (strategy.Hold.Ceiling): one hold per sale, or per batch of s.Batch
// buyers in a batched row, on as many rows as its stock has buckets;
// with sqlite, SQLite's one write lock counts too. ok is false at RTT 0
// or for a strategy whose hold is Free; why then says which, and
// otherwise what the hold is made of ("1 redis + 6 db trips + work").
func (m Strategy) Ceiling(s Settings, sqlite bool) (perSecond float64, why string, ok bool) {
	h, known := m.Name().Holds()
	switch {
	case !known:
		return 0, "no hold counted for " + string(m.Name()), false
	case h.FreeOn(sqlite):
		return 0, "no network ceiling: " + h.Free, false
	case s.RTT.IsZero():
		return 0, "no network (rtt 0)", false
	}
	per := 1
	if m.Batched() {
		per = s.Batch
	}
	rows := m.rows(s)
	c, ok := h.Ceiling(s.RTT, s.Work, sqlite, per, rows)
	return c, holdText(h, sqlite, per, rows), ok
}

// rows is how many rows m's stock is split over (its buckets), 0 for one.
func (m Strategy) rows(s Settings) int {
	rows := m.Buckets()
	if rows == 0 && m.Name() == strategy.SQLAtomic {
		rows = s.Buckets
	}
	return rows
}

// HoldsAtOnce is how many of m's holds can run at once under s: one per
// bucket where the database locks rows, else one (a lock, one row, or
// SQLite's one write lock). A measured hold per order h then allows
// HoldsAtOnce/h orders per second, as Ceiling allows its counted one.
func (m Strategy) HoldsAtOnce(s Settings, sqlite bool) int {
	if sqlite {
		return 1
	}
	return max(m.rows(s), 1)
}

// holdText says what a hold is made of, link by link.
func holdText(h strategy.Hold, sqlite bool, per, rows int) string {
	var parts []string
	db := h.DB
	if sqlite {
		db = max(db, h.Tx)
	}
	for _, l := range []struct {
		link netsim.Link
		n    int
	}{{netsim.Redis, h.Redis}, {netsim.Etcd, h.Etcd}, {netsim.ZooKeeper, h.ZooKeeper}, {netsim.DB, db}} {
		if l.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", l.n, l.link))
		}
	}
	t := strings.Join(parts, " + ") + " trips"
	if h.Work {
		t += " + work"
	}
	if per > 1 {
		t = fmt.Sprintf("%d buyers per %s", per, t)
	}
	if rows > 1 {
		t += fmt.Sprintf(", %d buckets", rows)
		if sqlite {
			t += " (SQLite's one write lock shared)"
		}
	}
	return t
}
