package stock_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/flashsale/flashsale/internal/harness/testenv"
	"github.com/flashsale/flashsale/internal/stock"
	"github.com/flashsale/flashsale/internal/strategy"
)

// good is a valid product; each case below breaks one field of it.
func good() stock.Product {
	return stock.Product{
		ID: "p-1", Name: "phone", Stock: 10, Strategy: strategy.Lua,
		LockTTL: time.Second, Work: 5 * time.Millisecond, Stall: time.Second, StallRate: 0.1,
	}
}

func TestCreateRejectsInvalid(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(p *stock.Product)
		field string // the message must name it
	}{
		{"empty id", func(p *stock.Product) { p.ID = "" }, "id"},
		{"id too long", func(p *stock.Product) { p.ID = strings.Repeat("a", 65) }, "id"},
		{"id with space", func(p *stock.Product) { p.ID = "a b" }, "id"},
		{"id with slash", func(p *stock.Product) { p.ID = "a/b" }, "id"},
		{"id with unicode", func(p *stock.Product) { p.ID = "手机" }, "id"},
		{"name too long", func(p *stock.Product) { p.Name = strings.Repeat("n", 201) }, "name"},
		{"name not utf-8", func(p *stock.Product) { p.Name = "\xff" }, "name"},
		{"negative stock", func(p *stock.Product) { p.Stock = -1 }, "stock"},
		{"stock too large", func(p *stock.Product) { p.Stock = stock.MaxStock + 1 }, "stock"},
		{"empty strategy", func(p *stock.Product) { p.Strategy = "" }, "strategy"},
		{"unknown strategy", func(p *stock.Product) { p.Strategy = "zk" }, "strategy"},
		{"ttl too short", func(p *stock.Product) { p.LockTTL = time.Millisecond }, "lock_ttl_ms"},
		{"ttl too long", func(p *stock.Product) { p.LockTTL = 2 * time.Minute }, "lock_ttl_ms"},
		{"ttl not whole ms", func(p *stock.Product) { p.LockTTL = 15500 * time.Microsecond }, "lock_ttl_ms"},
		{"negative work", func(p *stock.Product) { p.Work = -time.Millisecond }, "work_ms"},
		{"work too long", func(p *stock.Product) { p.Work = time.Hour }, "work_ms"},
		{"negative stall", func(p *stock.Product) { p.Stall = -time.Millisecond }, "stall_ms"},
		{"stall too long", func(p *stock.Product) { p.Stall = time.Hour }, "stall_ms"},
		{"negative stall rate", func(p *stock.Product) { p.StallRate = -0.1 }, "stall_rate"},
		{"stall rate above 1", func(p *stock.Product) { p.StallRate = 1.5 }, "stall_rate"},
		{"stall rate NaN", func(p *stock.Product) { p.StallRate = math.NaN() }, "stall_rate"},
		{"negative late commit", func(p *stock.Product) { p.LateCommit = -time.Millisecond }, "late_commit_ms"},
		{"late commit too long", func(p *stock.Product) { p.LateCommit = time.Hour }, "late_commit_ms"},
		{"late commit not whole ms", func(p *stock.Product) { p.LateCommit = 1500 * time.Microsecond }, "late_commit_ms"},
		{"negative late commit every", func(p *stock.Product) { p.LateCommitEvery = -1 }, "late_commit_every"},
		{"negative batch", func(p *stock.Product) { p.BatchMax = -1 }, "batch_max"},
		{"batch too large", func(p *stock.Product) { p.BatchMax = stock.MaxBatch + 1 }, "batch_max"},
		{"batch of a strategy that does not batch", func(p *stock.Product) { p.Strategy = "naive"; p.BatchMax = 8 }, "batch_max"},
		{"negative pay window", func(p *stock.Product) { p.PayWithin = -time.Millisecond }, "pay_within_ms"},
		{"pay window too long", func(p *stock.Product) { p.PayWithin = 2 * time.Hour }, "pay_within_ms"},
		{"pay window not whole ms", func(p *stock.Product) { p.PayWithin = 1500 * time.Microsecond }, "pay_within_ms"},
	}
	testenv.DB(t, func(t *testing.T, db *testenv.TestDB) {
		ctx := context.Background()
		s := stock.NewStore(db.DB())
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p := good()
				c.edit(&p)
				_, err := s.Create(ctx, p)
				if !errors.Is(err, stock.ErrInvalid) {
					t.Fatalf("Create: got err %v, want %v", err, stock.ErrInvalid)
				}
				if !strings.Contains(err.Error(), c.field) {
					t.Errorf("error %q does not name the field %q", err, c.field)
				}
			})
		}
		// Nothing reached the database.
		var n int64
		if err := db.DB().Raw("SELECT COUNT(*) FROM products").Row().Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("products after invalid creates: got %d rows, want 0", n)
		}
	})
}

func TestValidID(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{"a", true},
		{"AZaz09._:-", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{"a b", false},
		{"a\n", false},
		{"a{b}", false},
		{"é", false},
	}
	for _, c := range cases {
		if got := stock.ValidID(c.id); got != c.want {
			t.Errorf("ValidID(%q): got %v, want %v", c.id, got, c.want)
		}
	}
}
