package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/flashsale/flashsale/internal/harness/fleet"
	"github.com/flashsale/flashsale/internal/harness/tally"
)

// payer pays for a share of an attack's winners (Settings.Pay), each
// after its own delay (Settings.payDelay), at the shops of targets, one
// after another while a shop does not answer (a crash). Its methods are
// safe for concurrent use; wait returns once every payment it scheduled
// has its answer.
type payer struct {
	s       Settings
	targets []string
	tokens  clickTokens
	client  *http.Client
	ctx     context.Context

	wg     sync.WaitGroup
	mu     sync.Mutex
	counts tally.Payments
}

func newPayer(ctx context.Context, s Settings, targets []string, tokens clickTokens) *payer {
	return &payer{s: s, targets: targets, tokens: tokens, ctx: ctx,
		client: &http.Client{Timeout: s.timeout()}}
}

// won is told of every answer of the attack; a 201 is a winner, who pays
// if their order's draw falls within the share, and so is a 202 (a
// redis-queue order, queued), whose payment waits for its write.
func (p *payer) won(r *vegeta.Result) {
	if r.Code != http.StatusCreated && r.Code != http.StatusAccepted {
		return
	}
	queued := r.Code == http.StatusAccepted
	var o struct {
		ID     string `json:"id"`
		UserID string `json:"user_id"`
	}
	if json.Unmarshal(r.Body, &o) != nil || o.ID == "" {
		return
	}
	pays, delay := p.draw(o.ID)
	if !pays {
		return
	}
	p.mu.Lock()
	p.counts.Chosen++
	p.mu.Unlock()
	p.wg.Add(1)
	time.AfterFunc(delay, func() {
		defer p.wg.Done()
		p.count(p.pay(o.ID, o.UserID, queued))
	})
}

// draw decides from the order's id and the seed whether it is paid, and
// when: the same crowd pays the same orders.
func (p *payer) draw(id string) (bool, time.Duration) {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatUint(p.s.Seed, 10) + "/" + id))
	x := h.Sum64()
	u := float64(x>>11) / (1 << 53)                      // whether
	v := float64((x*0x9E3779B97F4A7C15)>>11) / (1 << 53) // when
	return u < p.s.Pay, p.s.payDelay(v)
}

// queuedWait is how long a queued order's payment asks again while the
// shops do not know the order (404: not written yet), beyond the window.
const queuedWait = 5 * time.Second

// pay sends the payment for order id, signed as user's, to one shop and
// to the next while none answers; it returns the status (0: none). A
// queued order's payment asks again while the order is not written yet:
// its deadline runs from its write.
func (p *payer) pay(id, user string, queued bool) int {
	giveUp := time.Now().Add(p.s.PayWithin + queuedWait)
	for {
		code := p.payOnce(id, user)
		if code != http.StatusNotFound || !queued || time.Now().After(giveUp) {
			return code
		}
		select {
		case <-p.ctx.Done():
			return 0
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// payOnce is one try of pay.
func (p *payer) payOnce(id, user string) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	first := int(h.Sum32() % uint32(len(p.targets)))
	for i := range p.targets {
		url := p.targets[(first+i)%len(p.targets)] + "/api/v1/orders/" + id + "/pay"
		req, err := http.NewRequestWithContext(p.ctx, http.MethodPost, url, nil)
		if err != nil {
			return 0
		}
		req.Header = p.tokens.headers(http.Header{}, user).Clone()
		resp, err := p.client.Do(req)
		if err != nil {
			if p.ctx.Err() != nil {
				return 0
			}
			continue
		}
		resp.Body.Close()
		if resp.StatusCode < 500 {
			return resp.StatusCode
		}
	}
	return 0
}

// count counts one payment's answer.
func (p *payer) count(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch code {
	case http.StatusOK:
		p.counts.Paid++
	case http.StatusConflict:
		p.counts.Expired++
	default:
		p.counts.Failed++
	}
}

// wait waits for every scheduled payment's answer, calling tick every
// 50 ms meanwhile (a live view's figures move while the payments land),
// and returns the counts.
func (p *payer) wait(tick func()) tally.Payments {
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-t.C:
			tick()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

// errPayRefused is returned by an attack whose shop refuses its
// product's pay window (a strategy that has none yet): Run shows the row
// as skipped, with the shop's reason, and goes on.
var errPayRefused = errors.New("scenario: the shop refuses a pay window for this strategy")

// payRefused reports whether err, the shop's answer to creating a
// product of s, refuses its pay window, and returns the row's Skipped.
func payRefused(s Settings, strategy Strategy, err error) (Skipped, bool) {
	if !s.Paying() || !errors.Is(err, fleet.ErrShop) || !strings.Contains(err.Error(), "pay_within_ms") {
		return Skipped{}, false
	}
	msg := err.Error()
	if i := strings.Index(msg, "pay_within_ms"); i >= 0 {
		msg = msg[i:]
		if j := strings.IndexAny(msg, "\"}"); j > 0 {
			msg = msg[:j]
		}
	}
	return Skipped{Strategy: strategy, Why: "--pay-within: the shop refuses a pay window here (" + msg + ")"}, true
}

// saleEndWait bounds how long an attack waits, after its last payment,
// for the shops' sweeps to expire every unpaid order: beyond the window
// itself, many sweeps' worth (a loaded machine's sweeps run late; the
// wait ends as soon as nothing is pending).
const saleEndWait = 30 * time.Second

// waitSaleEnd waits until no order of product is pending any more (the
// sale has ended: every order paid or expired, its unit back on sale),
// or until the window and saleEndWait have passed, reading again after an
// audit that failed; it returns the last audit it read. tick is called at every poll: the orders that are still
// pending end meanwhile, and a live view shows them end.
func (a *attack) waitSaleEnd(ctx context.Context, product string, tick func()) (tally.Audit, error) {
	deadline := time.Now().Add(a.settings.PayWithin + saleEndWait)
	for {
		tick()
		au, err := a.api.Audit(ctx, product)
		if err == nil && (au.Life == nil || au.Life.Pending == 0) || time.Now().After(deadline) {
			return au, err
		}
		select {
		case <-ctx.Done():
			return au, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
