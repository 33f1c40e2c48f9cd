package report

import "encoding/json"

// report.json called a strategy a mode before: "modes" for the rows and
// the settings' list, "mode" for a row's name. loadgen merge and loadgen
// compare read reports that older runs wrote, so these types read either
// name; they write the new one only.

// UnmarshalJSON reads d, with its rows under "strategies" or "modes".
func (d *Document) UnmarshalJSON(b []byte) error {
	type plain Document
	return readRenamed(b, (*plain)(d), "modes", "strategies", &d.Strategies)
}

// UnmarshalJSON reads s, with its strategies under "strategies" or "modes".
func (s *SettingsDoc) UnmarshalJSON(b []byte) error {
	type plain SettingsDoc
	return readRenamed(b, (*plain)(s), "modes", "strategies", &s.Strategies)
}

// UnmarshalJSON reads m, its name under "strategy" or "mode".
func (m *StrategyDoc) UnmarshalJSON(b []byte) error {
	type plain StrategyDoc
	return readRenamed(b, (*plain)(m), "mode", "strategy", &m.Strategy)
}

// UnmarshalJSON reads r, its name under "strategy" or "mode".
func (r *SweepRowDoc) UnmarshalJSON(b []byte) error {
	type plain SweepRowDoc
	return readRenamed(b, (*plain)(r), "mode", "strategy", &r.Strategy)
}

// UnmarshalJSON reads s, its name under "strategy" or "mode".
func (s *SkippedDoc) UnmarshalJSON(b []byte) error {
	type plain SkippedDoc
	return readRenamed(b, (*plain)(s), "mode", "strategy", &s.Strategy)
}

// UnmarshalJSON reads f, its row under "strategy" or "mode".
func (f *Failure) UnmarshalJSON(b []byte) error {
	type plain Failure
	return readRenamed(b, (*plain)(f), "mode", "strategy", &f.Strategy)
}

// readRenamed decodes b into v, then, if b has a key by its older name
// only, that key's value into field.
func readRenamed(b []byte, v any, older, newer string, field any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	old, hasOld := keys[older]
	if _, hasNew := keys[newer]; !hasOld || hasNew {
		return nil
	}
	return json.Unmarshal(old, field)
}
