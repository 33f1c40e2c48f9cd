package httpapi

// required reports a missing field when p is nil. Request structs use
// pointers for required fields so that "quantity": 0 and a missing
// quantity are told apart.
func required[T any](field string, p *T) error {
	if p == nil {
		return invalid(field, "required")
	}
	return nil
}

// checkRange validates lo <= v <= hi.
func checkRange[T int | float64](field string, v, lo, hi T) error {
	if v < lo || v > hi {
		return invalid(field, "must be between %v and %v, got %v", lo, hi, v)
	}
	return nil
}
