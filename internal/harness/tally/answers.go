package tally

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The shop's error codes that the scenario expects: README.md, "The HTTP
// API", lists them per route; internal/httpapi/errors.go maps them.
const (
	codeSoldOut          = "sold_out"
	codeDuplicateOrder   = "duplicate_order"
	codeDuplicateRequest = "duplicate_request"
)

// Kinds of answer, as Classify names them.
const (
	KindCreated   = "created"   // 201: an order
	KindQueued    = "queued"    // 202: an order accepted into the queue (redis-queue)
	KindSoldOut   = "sold_out"  // 409 sold_out
	KindDuplicate = "duplicate" // 409 duplicate_request or duplicate_order
	KindError     = "error"     // anything else: 503s, other statuses, no answer
)

// Classify says what kind of answer r is, one of the Kind constants. It is
// safe for concurrent use.
func Classify(r *vegeta.Result) string {
	kind, _ := classify(r)
	return kind
}

// classify is Classify, with the answer's code (errorCode).
func classify(r *vegeta.Result) (kind, code string) {
	code = errorCode(r)
	switch {
	case r.Code == http.StatusCreated:
		return KindCreated, code
	case r.Code == http.StatusAccepted:
		return KindQueued, code
	case r.Code == http.StatusConflict && code == codeSoldOut:
		return KindSoldOut, code
	case r.Code == http.StatusConflict && (code == codeDuplicateRequest || code == codeDuplicateOrder):
		return KindDuplicate, code
	}
	return KindError, code
}

// Answers counts one attack's answers by what they mean for the sale. The
// zero value is ready to use; it is not safe for concurrent use.
type Answers struct {
	// Requests is every answer, including requests that got none.
	Requests int `json:"requests"`
	// Created counts 201s: orders the buyers were told they have.
	Created int `json:"created"`
	// Queued counts 202s: orders accepted into the product's queue
	// (redis-queue), to be written behind it. An accepted order counts as
	// much as a created one: the drain and the audit check it was written.
	Queued int `json:"queued"`
	// SoldOut counts 409 sold_out.
	SoldOut int `json:"sold_out"`
	// DuplicateRequests counts 409 duplicate_request: a repeated click
	// caught in flight by the dedupe lock.
	DuplicateRequests int `json:"duplicate_requests"`
	// DuplicateOrders counts 409 duplicate_order: a repeated click caught
	// inside the product lock because the buyer already had an order.
	DuplicateOrders int `json:"duplicate_orders_rejected"`
	// Errors counts every other answer by "status code", e.g.
	// "503 lock_timeout", "503 busy", "0 connection refused".
	Errors map[string]int `json:"errors"`
	// Status counts answers by HTTP status; 0 means no answer.
	Status map[int]int `json:"status"`
}

// Accepted is how many buyers were told they have an order: 201s and
// 202s.
func (t *Answers) Accepted() int { return t.Created + t.Queued }

// Shed counts the clicks turned away for load (503 and 429 answers) by
// their code: busy, lock_timeout, rate_limited... It returns a new map,
// nil if there were none.
func (t *Answers) Shed() map[string]int {
	var out map[string]int
	for key, n := range t.Errors {
		status, code, ok := strings.Cut(key, " ")
		if ok && (status == "503" || status == "429") {
			if out == nil {
				out = map[string]int{}
			}
			out[code] += n
		}
	}
	return out
}

// DupRejected is how many repeated clicks the shop turned away.
func (t *Answers) DupRejected() int { return t.DuplicateRequests + t.DuplicateOrders }

// ErrorCount is how many answers were neither an order nor an expected 409.
func (t *Answers) ErrorCount() int {
	n := 0
	for _, v := range t.Errors {
		n += v
	}
	return n
}

// Class counts answers by class: 2xx, 4xx, 5xx, and other (no answer).
func (t *Answers) Class() (c2xx, c4xx, c5xx, other int) {
	for code, n := range t.Status {
		switch code / 100 {
		case 2:
			c2xx += n
		case 4:
			c4xx += n
		case 5:
			c5xx += n
		default:
			other += n
		}
	}
	return
}

// ErrorsByStatus renders Errors grouped by status, e.g. "503×12 0×3", or
// "-" when there were none.
func (t *Answers) ErrorsByStatus() string {
	by := map[string]int{}
	for k, n := range t.Errors {
		status, _, _ := strings.Cut(k, " ")
		by[status] += n
	}
	if len(by) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, by[k])
	}
	return strings.Join(parts, " ")
}

// Add counts one Vegeta result.
func (t *Answers) Add(r *vegeta.Result) {
	if t.Status == nil {
		t.Status = map[int]int{}
		t.Errors = map[string]int{}
	}
	t.Requests++
	t.Status[int(r.Code)]++
	switch kind, code := classify(r); {
	case kind == KindCreated:
		t.Created++
	case kind == KindQueued:
		t.Queued++
	case kind == KindSoldOut:
		t.SoldOut++
	case kind == KindDuplicate && code == codeDuplicateRequest:
		t.DuplicateRequests++
	case kind == KindDuplicate:
		t.DuplicateOrders++
	default:
		t.Errors[strconv.Itoa(int(r.Code))+" "+code]++
	}
}

// errorCode is the shop's error code in r's body, the transport error when
// there was no answer, or the status text when the body says nothing.
func errorCode(r *vegeta.Result) string {
	if r.Code == 0 {
		return shortError(r.Error)
	}
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.Body, &body) == nil && body.Error.Code != "" {
		return body.Error.Code
	}
	if r.Code == http.StatusCreated || r.Code == http.StatusAccepted {
		return ""
	}
	return strings.ToLower(strings.ReplaceAll(http.StatusText(int(r.Code)), " ", "_"))
}

// shortError keeps the tail of a transport error ("connection refused",
// "i/o timeout"), which is what tells one failure from another.
func shortError(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	if s == "" {
		return "no answer"
	}
	return s
}
