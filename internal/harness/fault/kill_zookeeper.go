package fault

import (
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

func init() { register(func() Fault { return ZooKeeperKill(0) }) }

// ZooKeeperKill is --zookeeper-kill n: n of the three ZooKeeper members
// SIGKILLed halfway through the zookeeper attack (NodeKill). Only the
// ensemble the load generator starts can be killed.
func ZooKeeperKill(n int) *NodeKill {
	return &NodeKill{N: n, nodeKind: nodeKind{
		flag: "zookeeper-kill", row: strategy.ZooKeeper, noun: "ZooKeeper members", total: fleet.ZooKeeperMembers,
		usage:  "SIGKILL N of the 3 ZooKeeper members halfway through the zookeeper attack, and restart them on their data after it (default 0: none)",
		killer: func(f *fleet.Fleet) fleet.NodeKiller { return f.ZooKeeperMembers },
		check: func(n int, p Plan) []string {
			if n > 0 && (p.Targets || p.ZooKeeper) {
				return []string{"zookeeper-kill: only with the ensemble the load generator starts (no --targets, no --zookeeper): it kills its members"}
			}
			return nil
		},
	}}
}
