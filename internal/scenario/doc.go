// Package scenario owns the 双11 scenario: a crowd of buyers racing for a
// few units of one product, run once per lock mode against a fleet of shops,
// measured with Vegeta.
//
// A run, per mode (Run):
//
//  1. create a fresh product with that mode and the run's settings
//     (POST /api/v1/products, admin);
//  2. attack it: a Vegeta attacker (keep-alive connections, workers grown on
//     demand) at a constant rate (Vegeta's ConstantPacer) sends the crowd's
//     clicks, POST /api/v1/orders, spread over the shops; the crowd is a
//     Vegeta Targeter built from the seed: distinct buyers, each clicking
//     1..Clicks times within a few milliseconds, interleaved with their
//     neighbours as a real crowd's clicks are;
//  3. read the shop's audit of the product (GET .../audit, admin), which the
//     shop computes with SQL from its orders table;
//  4. explain the row in one line (explain.go says what is measured and
//     what is only expected).
//
// The fleet is either started here (StartFleet: the embedded backends and
// three app.NewShop instances on loopback ports, each with its own Redis
// clients and lockers, as separate processes would be) or someone else's
// (ExternalFleet: base URLs and an admin token). --redlock-kill takes Redis
// nodes down halfway through the redlock attack: embedded nodes are closed
// and restarted on the same port; external nodes are paused with
// CLIENT PAUSE <ms> ALL and resume by themselves (pause.go says why that is
// an honest stand-in for a dead node). --redis-restart restarts Redis nodes
// empty, as a Redis without persistence comes back from a crash, in the
// redlock and fenced attacks, as soon as a holder is seen taking the lock
// (restart.go says why then, and restart_nodes.go how, per kind of fleet).
// --failover (Settings.Failovers) kills a Sentinel-managed master of the
// load generator's own (package redisproc) in every attack, right after it
// granted a lock its held replica never got (failover.go says why then,
// failover_run.go how). --crash (Settings.Crash) SIGKILLs a shop process
// mid-sale and starts it again, in a fleet whose shops are child processes
// (FleetConfig.Processes; shopprocs.go, childshop.go); crash.go says when
// and what it counts.
//
// Package report turns the Outcome into the table and the report folder;
// cmd/loadgen wires flags, fleet, run and report together.
package scenario
