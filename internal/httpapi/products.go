package httpapi

import (
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

// maxMillis bounds the *_ms fields before they become time.Durations, so a
// huge number cannot overflow into a plausible value. Package stock applies
// the real, per-field limits.
const maxMillis = 1 << 31

// product checks presence and converts the request to a stock.Product. The
// values themselves (id charset, stock range, TTL limits, mode names) are
// validated by stock.Store.Create before anything reaches the database.
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
		if err := checkRange(f.name, *f.ms, 0, maxMillis); err != nil {
			return stock.Product{}, err
		}
		*f.dst = time.Duration(*f.ms) * time.Millisecond
	}
	return p, nil
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

// getProduct handles GET /api/v1/products/:id: 200 with the product.
func (a *api) getProduct(c *gin.Context) {
	id := c.Param("id")
	if err := stock.CheckID("id", id); err != nil {
		writeError(c, err)
		return
	}
	p, err := a.products.Get(c.Request.Context(), id)
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
