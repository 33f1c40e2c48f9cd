package locktable

import (
	"slices"
)

// Order returns the measured systems of case j, fastest first by median
// rate; skipped systems are left out.
func (t *Table) Order(j int) []int {
	var order []int
	for i, s := range t.Systems {
		if s.Acquire != nil {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, rb := t.Cells[a][j].Rate(), t.Cells[b][j].Rate()
		switch {
		case ra > rb:
			return -1
		case ra < rb:
			return 1
		}
		return 0
	})
	return order
}

// Inversions returns, for case j, every pair of measured systems that the
// measurement puts the other way round from the claim: the one claimed
// slower, then the one claimed faster, by their kinds' names.
func (t *Table) Inversions(j int) [][2]string {
	claimed := ClaimedOrder()
	rank := func(k Kind) int { return slices.Index(claimed, k) }
	order := t.Order(j)
	var inv [][2]string
	for a := range order {
		for _, below := range order[a+1:] {
			above := order[a]
			ka, kb := t.Systems[above].Kind, t.Systems[below].Kind
			if rank(ka) > rank(kb) {
				inv = append(inv, [2]string{ka.String(), kb.String()})
			}
		}
	}
	return inv
}
