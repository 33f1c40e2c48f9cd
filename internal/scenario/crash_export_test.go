package scenario

// ShopPIDs is the process ids of a process fleet's shops, in shop order.
func ShopPIDs(f *Fleet) []int {
	pids := make([]int, len(f.procs.shops))
	for i := range pids {
		pids[i] = f.procs.pid(i)
	}
	return pids
}
