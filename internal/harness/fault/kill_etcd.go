package fault

import (
	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/strategy"
)

func init() { register(func() Fault { return EtcdKill(0) }) }

// EtcdKill is --etcd-kill n: n of the three etcd members down halfway
// through the etcd attack (NodeKill). Only the embedded cluster's members
// can be stopped: the load generator runs them.
func EtcdKill(n int) *NodeKill {
	return &NodeKill{N: n, nodeKind: nodeKind{
		flag: "etcd-kill", row: strategy.Etcd, noun: "etcd members", total: fleet.EtcdMembers,
		usage:  "stop N of the 3 embedded etcd members halfway through the etcd attack, and bring them back after it (default 0: none)",
		killer: func(f *fleet.Fleet) fleet.NodeKiller { return f.EtcdMembers },
		check: func(n int, p Plan) []string {
			if n > 0 && (p.Targets || p.Etcd) {
				return []string{"etcd-kill: only with the embedded etcd cluster (no --targets, no --etcd): the load generator stops its members"}
			}
			return nil
		},
	}}
}
