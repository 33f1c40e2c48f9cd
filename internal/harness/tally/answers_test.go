package tally

import (
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestTallyCountsWhatAnswersMean(t *testing.T) {
	body := func(code string) []byte { return []byte(`{"error":{"code":"` + code + `","message":"x"}}`) }
	var tl Answers
	for _, r := range []vegeta.Result{
		{Code: 201, Body: []byte(`{"id":"1"}`)},
		{Code: 201},
		{Code: 409, Body: body("sold_out")},
		{Code: 409, Body: body("duplicate_request")},
		{Code: 409, Body: body("duplicate_order")},
		{Code: 503, Body: body("lock_timeout")},
		{Code: 503, Body: body("lock_timeout")},
		{Code: 503, Body: body("unavailable")},
		{Code: 503, Body: body("busy")},
		{Code: 500, Body: []byte("oops")},
		{Code: 0, Error: "Post \"http://x\": dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		tl.Add(&r)
	}
	if tl.Requests != 11 || tl.Created != 2 || tl.SoldOut != 1 || tl.DupRejected() != 2 || tl.ErrorCount() != 6 {
		t.Fatalf("tally %+v: got requests %d created %d sold_out %d dup %d errors %d, want 11 2 1 2 6",
			tl, tl.Requests, tl.Created, tl.SoldOut, tl.DupRejected(), tl.ErrorCount())
	}
	if got, want := tl.Errors["503 lock_timeout"], 2; got != want {
		t.Errorf(`Errors["503 lock_timeout"] = %d, want %d (all %v)`, got, want, tl.Errors)
	}
	if got, want := tl.Errors["503 busy"], 1; got != want {
		t.Errorf(`Errors["503 busy"] = %d, want %d (all %v)`, got, want, tl.Errors)
	}
	if got, want := tl.Errors["0 connection refused"], 1; got != want {
		t.Errorf(`Errors["0 connection refused"] = %d, want %d (all %v)`, got, want, tl.Errors)
	}
	if got, want := tl.ErrorsByStatus(), "0×1 500×1 503×4"; got != want {
		t.Errorf("ErrorsByStatus() = %q, want %q", got, want)
	}
	c2, c4, c5, other := tl.Class()
	if c2 != 2 || c4 != 3 || c5 != 5 || other != 1 {
		t.Errorf("Class() = %d %d %d %d, want 2 3 5 1", c2, c4, c5, other)
	}
}
