package scenario_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/flashsale/flashsale/internal/harness/fault"
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/report"
	"github.com/flashsale/flashsale/internal/harness/scenario"
	"github.com/flashsale/flashsale/internal/strategy"
)

// Run the scenario on the embedded backends, as `go run ./cmd/loadgen`
// does, and print the table.
func ExampleRun() {
	ctx := context.Background()
	f, err := fleet.StartFleet(ctx, fleet.FleetConfig{}) // embedded Redis and SQLite, three shops
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	s := scenario.DefaultSettings()
	s.Strategies = []scenario.Strategy{scenario.Strategy(strategy.Naive), scenario.Strategy(strategy.Lua)}
	out, err := scenario.Run(ctx, s, f, scenario.Options{Progress: os.Stdout})
	if err != nil {
		log.Fatal(err)
	}
	report.WriteText(os.Stdout, out)
	for _, m := range out.Strategies {
		fmt.Printf("%s oversold %d\n", m.Strategy, m.Audit.Oversold)
	}
}

// Attack a fleet someone else started, and take two Redlock nodes down
// halfway through the redlock attack.
func ExampleRun_externalFleet() {
	f := fleet.ExternalFleet(
		[]string{"http://127.0.0.1:8080", "http://127.0.0.1:8081"}, "admin-token",
		[]string{"127.0.0.1:7101", "127.0.0.1:7102", "127.0.0.1:7103", "127.0.0.1:7104", "127.0.0.1:7105"})
	s := scenario.DefaultSettings()
	s.Strategies, s.Faults = []scenario.Strategy{scenario.Strategy(strategy.Redlock)}, []fault.Fault{fault.RedlockKill(2)}
	out, err := scenario.Run(context.Background(), s, f, scenario.Options{})
	if err != nil {
		log.Fatal(err)
	}
	report.Write(report.Dir("loadgen-report", time.Now()), out)
}
