package report

import (
	"fmt"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// The page's tests need outcomes shaped like the load generator's: every
// default row, with hundreds of answers each, and a sweep whose rows
// collapse at different rates. These build them from fixed numbers.

var fixtureStart = time.Date(2025, 11, 11, 0, 0, 0, 0, time.UTC)

// answerFunc answers the i-th of n requests: its status, its error code
// ("" for none) and how long it took.
type answerFunc func(i, n int) (code uint16, errCode string, latency time.Duration)

// attack is a row of strategy whose n requests were sent evenly over span and
// answered by answer.
func attack(strategy scenario.Strategy, n int, span time.Duration, answer answerFunc) *scenario.StrategyResult {
	m := &scenario.StrategyResult{Strategy: strategy, ProductID: "p-" + string(strategy), Planned: n, Sent: n, CPU: -1}
	for i := range n {
		code, errCode, lat := answer(i, n)
		body := ""
		if errCode != "" {
			body = fmt.Sprintf(`{"error":{"code":%q}}`, errCode)
		}
		r := vegeta.Result{Attack: string(strategy), Seq: uint64(i), Code: code, Body: []byte(body),
			Timestamp: fixtureStart.Add(span * time.Duration(i) / time.Duration(n)), Latency: lat}
		m.Tally.Add(&r)
		m.Metrics.Add(&r)
		m.Results = append(m.Results, r)
	}
	m.Metrics.Close()
	return m
}

// saleAnswers sells stock units to the first buyers, answers the rest
// sold out, and refuses every refuseEvery-th click with a 503 (never, for
// 0); latencies run from base to base×8 over the attack.
func saleAnswers(stock, refuseEvery int, base time.Duration) answerFunc {
	sold := 0
	return func(i, n int) (uint16, string, time.Duration) {
		lat := base + base*time.Duration(7*i)/time.Duration(n)
		switch {
		case refuseEvery > 0 && i%refuseEvery == refuseEvery-1:
			return 503, "lock_timeout", lat
		case sold < stock:
			sold++
			return 201, "", lat
		}
		return 409, "sold_out", lat / 2
	}
}

// fleetOutcome is a default run: every default row selling 100 units to
// 1,200 clicks, off overselling 3 and naive 1, redis-queue queueing.
func fleetOutcome() *scenario.Outcome {
	s := scenario.DefaultSettings()
	s.Strategies = scenario.Strategies()
	o := &scenario.Outcome{Settings: s, Env: scenario.CurrentEnv(), Targets: []string{"http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"},
		Backend: "embedded (fixture)", Started: fixtureStart, Wall: 40 * time.Second}
	for i, strategy := range s.Strategies {
		m := attack(strategy, 1200, 2*time.Second, saleAnswers(100, 7+i, time.Duration(2+i)*time.Millisecond))
		m.CPU = time.Duration(150+20*i) * time.Millisecond
		m.Audit = tally.Audit{InitialStock: 100, Orders: 100, Sold: 100, Consistent: true}
		switch strategy {
		case "off":
			m.Audit.Orders, m.Audit.Sold, m.Audit.Oversold = 103, 103, 3
		case "naive":
			m.Audit.Orders, m.Audit.Sold, m.Audit.Oversold = 101, 101, 1
		case "redis-queue":
			m.Drain = &tally.Drain{Took: 400 * time.Millisecond}
		}
		m.Why = fmt.Sprintf("%s sold %d of 100 units to 1,200 clicks.", strategy, m.Audit.Sold)
		o.Strategies = append(o.Strategies, m)
	}
	return o
}

// sweepRow is a row of a sweep fixture: it serves up to capacity clicks
// per second in 20 ms; past that, the rest wait and are refused.
type sweepRow struct {
	strategy scenario.Strategy
	capacity float64
}

// fleetSweep is a sweep of six rows at 250, 500, 1,000 and 2,000 clicks/s,
// each collapsing past its own capacity (sql-atomic never).
func fleetSweep() *scenario.Outcome {
	s := scenario.DefaultSettings()
	s.Strategies = nil
	rows := []sweepRow{{"off", 1800}, {"lua", 700}, {"sql-atomic", 4000}, {"redis-decr", 1200}, {"redis-queue", 900}, {"fenced+batch", 1500}}
	for _, r := range rows {
		s.Strategies = append(s.Strategies, r.strategy)
	}
	o := &scenario.Outcome{Settings: s, Env: scenario.CurrentEnv(), Targets: []string{"http://127.0.0.1:1"},
		Backend: "embedded (fixture)", Started: fixtureStart, Wall: 90 * time.Second}
	for _, rate := range []int{250, 500, 1000, 2000} {
		p := scenario.SweepPoint{Rate: vegeta.Rate{Freq: rate, Per: time.Second}}
		for _, r := range rows {
			served := min(1, r.capacity/float64(rate))
			m := attack(r.strategy, rate/2, 500*time.Millisecond, func(i, n int) (uint16, string, time.Duration) {
				if int(float64(i+1)*served) > int(float64(i)*served) {
					return 201, "", time.Duration(20/served) * time.Millisecond
				}
				return 503, "lock_timeout", time.Duration(400/served) * time.Millisecond
			})
			m.Audit = tally.Audit{InitialStock: scenario.SweepStock, Orders: m.Tally.Created, Sold: m.Tally.Created, Consistent: true}
			p.Strategies = append(p.Strategies, m)
		}
		o.Sweep = append(o.Sweep, p)
	}
	return o
}

// fleetCount is fleetOutcome with its lua row run three times, one run
// losing an order.
func fleetCount() *scenario.Outcome {
	o := fleetOutcome()
	o.Settings.Count = 3
	row := o.Strategies[2]
	for i := range 3 {
		r := attack(row.Strategy, 1200, 2*time.Second, saleAnswers(100, 9+i, time.Duration(3+i)*time.Millisecond))
		r.Audit, r.CPU, r.Why = row.Audit, row.CPU, row.Why
		r.Lost = i / 2
		row.Runs = append(row.Runs, r)
	}
	o.Strategies[2] = row.Runs[1]
	o.Strategies[2].Runs = row.Runs
	return o
}

// fleetCrash is fleetOutcome under --crash 1: each row's attack had shop 2
// killed a second in; redis-decr told 2 buyers "ordered" and wrote no
// order, and etcd's attack sent nothing (its shop never came back).
func fleetCrash() *scenario.Outcome {
	o := fleetOutcome()
	o.Settings.Faults = []fault.Fault{&fault.ShopCrash{Kills: 1}}
	for _, m := range o.Strategies {
		m.Records = fault.Records{&fault.Crash{Planned: 1, Kills: []fault.CrashKill{{Shop: 1, At: time.Second, Back: 1600 * time.Millisecond}}}}
		switch m.Strategy {
		case "redis-decr":
			m.Lost = 2
		case "etcd":
			*m = scenario.StrategyResult{Strategy: m.Strategy, ProductID: m.ProductID, CPU: -1, Why: "etcd sent nothing: its shop never came back.",
				Audit: tally.Audit{InitialStock: 100, Stock: 100, Consistent: true}}
		}
	}
	return o
}

// fleetClean is fleetOutcome with nothing oversold: its audit chart has
// no bar to draw.
func fleetClean() *scenario.Outcome {
	o := fleetOutcome()
	for _, m := range o.Strategies {
		m.Audit.Orders, m.Audit.Sold, m.Audit.Oversold = 100, 100, 0
	}
	return o
}

// fleetRestart is fleetOutcome, redlock and fenced only, under
// --redis-restart 3: each attack had three nodes restarted empty half a
// second in, and redlock oversold.
func fleetRestart() *scenario.Outcome {
	o := fleetOutcome()
	o.Settings.Faults = []fault.Fault{&fault.EmptyRestart{Nodes: 3}}
	var rows []*scenario.StrategyResult
	for _, m := range o.Strategies {
		if m.Strategy != "redlock" && m.Strategy != "fenced" {
			continue
		}
		m.Records = fault.Records{&fault.Restart{Nodes: []int{0, 1, 2}, Restarted: true, At: 500 * time.Millisecond, Back: 500 * time.Millisecond, GrantedWhileHeld: -1}}
		if m.Strategy == "redlock" {
			m.Audit.Orders, m.Audit.Sold, m.Audit.Oversold = 102, 102, 2
		}
		rows = append(rows, m)
	}
	o.Strategies, o.Settings.Strategies = rows, []scenario.Strategy{"redlock", "fenced"}
	return o
}

// fleetPay is a sale with payments (--pay 0.7 --pay-within 1s) of
// sql-atomic, whose unpaid units came back once each and sold again, and
// sql-for-update as the naive expiry leaves it: a unit returned twice and
// two neither sold nor on sale.
func fleetPay() *scenario.Outcome {
	o := fleetOutcome()
	o.Settings.Pay, o.Settings.PayWithin = 0.7, time.Second
	var rows []*scenario.StrategyResult
	for _, m := range o.Strategies {
		switch m.Strategy {
		case "sql-atomic":
			m.Audit.Life = &tally.Life{Paid: 100, Expired: 31, Placed: 131, Resold: 31}
			m.Events.Returned = 31
			m.Payments = &tally.Payments{Chosen: 100, Paid: 100}
		case "sql-for-update":
			m.Audit.Life = &tally.Life{Paid: 98, Expired: 30, Placed: 128, Resold: 27, Undersold: 2}
			m.Events.Returned = 31
			m.Payments = &tally.Payments{Chosen: 99, Paid: 98, Expired: 1}
		default:
			continue
		}
		rows = append(rows, m)
	}
	o.Strategies, o.Settings.Strategies = rows, []scenario.Strategy{"sql-for-update", "sql-atomic"}
	return o
}
