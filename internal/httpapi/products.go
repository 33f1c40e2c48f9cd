package httpapi

import (
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/flashsale/flashsale/internal/dlock"
	"github.com/flashsale/flashsale/internal/stock"
)

// createProductRequest is the body of POST /api/v1/products. Required fields
// are pointers so a missing one is told apart from a zero; the optional
// settings default in package stock (name: the id, lock_ttl_ms: 5000,
// work, stall and stall_rate: 0).
type createProductRequest struct {
	ID        *string  `json:"id"`
	Name      *string  `json:"name"`
	Stock     *int     `json:"stock"`
	LockMode  *string  `json:"lock_mode"`
	LockTTLMs *int     `json:"lock_ttl_ms"`
	WorkMs    *int     `json:"work_ms"`
	StallMs   *int     `json:"stall_ms"`
	StallRate *float64 `json:"stall_rate"`
}

// product checks that every required field is present and converts the
// request to a stock.Product. The values themselves (id charset, stock
// range, TTL limits, mode names) are stock.Store.Create's to judge.
func (r *createProductRequest) product() (stock.Product, error) {
	if err := required("id", r.ID); err != nil {
		return stock.Product{}, err
	}
	if err := required("stock", r.Stock); err != nil {
		return stock.Product{}, err
	}
	if err := required("lock_mode", r.LockMode); err != nil {
		return stock.Product{}, err
	}
	p := stock.Product{
		ID:       *r.ID,
		Name:     deref(r.Name),
		Stock:    *r.Stock,
		LockMode: dlock.Mode(*r.LockMode),
	}
	if r.StallRate != nil {
		p.StallRate = *r.StallRate
	}
	for _, f := range []struct {
		name string
		ms   *int
		dst  *time.Duration
	}{
		{"lock_ttl_ms", r.LockTTLMs, &p.LockTTL},
		{"work_ms", r.WorkMs, &p.Work},
		{"stall_ms", r.StallMs, &p.Stall},
	} {
		if f.ms == nil {
			continue
		}
		d, err := millis(f.name, *f.ms)
		if err != nil {
			return stock.Product{}, err
		}
		*f.dst = d
	}
	return p, nil
}

// maxMillis is the most milliseconds a time.Duration holds (about 292
// years).
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// millis converts a *_ms field to a time.Duration. A number beyond what a
// Duration holds is refused here, as encoding/json refuses a number beyond
// what an int holds: it would overflow into some other, plausible value.
// Every number that converts is package stock's to judge.
func millis(field string, ms int) (time.Duration, error) {
	if int64(ms) > maxMillis || int64(ms) < -maxMillis {
		return 0, invalid(field, "%d milliseconds do not fit in a duration", ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// productJSON is a product on the wire.
type productJSON struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Stock        int       `json:"stock"`
	InitialStock int       `json:"initial_stock"`
	LockMode     string    `json:"lock_mode"`
	LockTTLMs    int64     `json:"lock_ttl_ms"`
	WorkMs       int64     `json:"work_ms"`
	StallMs      int64     `json:"stall_ms"`
	StallRate    float64   `json:"stall_rate"`
	CreatedAt    time.Time `json:"created_at"`
}

func toProductJSON(p stock.Product) productJSON {
	return productJSON{
		ID:           p.ID,
		Name:         p.Name,
		Stock:        p.Stock,
		InitialStock: p.InitialStock,
		LockMode:     string(p.LockMode),
		LockTTLMs:    p.LockTTL.Milliseconds(),
		WorkMs:       p.Work.Milliseconds(),
		StallMs:      p.Stall.Milliseconds(),
		StallRate:    p.StallRate,
		CreatedAt:    p.CreatedAt.UTC(),
	}
}

// createProduct handles POST /api/v1/products (admin): 201 with the product.
func (a *api) createProduct(c *gin.Context) {
	var req createProductRequest
	if err := decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	p, err := req.product()
	if err != nil {
		writeError(c, err)
		return
	}
	created, err := a.products.Create(c.Request.Context(), p)
	if err != nil {
		writeError(c, err)
		return
	}
	c.Header("Location", "/api/v1/products/"+created.ID)
	c.PureJSON(http.StatusCreated, toProductJSON(created))
}

// getProduct handles GET /api/v1/products/:id: 200 with the product. Get
// checks the id.
func (a *api) getProduct(c *gin.Context) {
	p, err := a.products.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	c.PureJSON(http.StatusOK, toProductJSON(p))
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
