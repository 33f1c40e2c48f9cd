package locktable

// Claim is what the textbook's table says about a lock service: its
// throughput (0: it gives no figure) and its latency, as it words it.
type Claim struct {
	TPS     int
	Latency string
}

// claims is the table as the lesson quotes it. The row lock has no figure:
// the table calls it slow and fit for low concurrency.
var claims = map[Kind]Claim{
	SingleRedis: {TPS: 100_000, Latency: "< 1 ms"},
	Redlock:     {TPS: 10_000, Latency: "5–10 ms"},
	Etcd:        {TPS: 5_000, Latency: "5–20 ms"},
	ZooKeeper:   {TPS: 1_000, Latency: "10–50 ms"},
	RowLock:     {Latency: "slow (no figure)"},
}

// Claimed returns what the table claims for k.
func Claimed(k Kind) Claim { return claims[k] }

// String names the service as the claimed table does.
func (k Kind) String() string {
	switch k {
	case SingleRedis:
		return "single Redis"
	case Redlock:
		return "Redlock"
	case Etcd:
		return "etcd"
	case ZooKeeper:
		return "ZooKeeper"
	case RowLock:
		return "row lock"
	}
	return "unknown"
}

// ClaimedRatio is how many times single Redis's claimed TPS is k's: 10 for
// Redlock, 100 for ZooKeeper; 0 where k has no figure.
func ClaimedRatio(k Kind) float64 {
	c := claims[k]
	if c.TPS == 0 {
		return 0
	}
	return float64(claims[SingleRedis].TPS) / float64(c.TPS)
}

// ClaimedOrder is the services from the fastest claim to the slowest, the
// row lock, which has no figure, last.
func ClaimedOrder() []Kind { return []Kind{SingleRedis, Redlock, Etcd, ZooKeeper, RowLock} }
