package stock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/flashsale/flashsale/internal/strategy"
)

// Store reads and writes products. It is safe for concurrent use; it holds
// nothing but the *gorm.DB, whose pool it shares with the caller.
type Store struct {
	db *gorm.DB
}

// NewStore returns a Store on db, which must have the schema applied
// (package migrations). The caller keeps ownership of db and closes it.
func NewStore(db *gorm.DB) *Store {
	return &Store{db: db}
}

// Create validates p, sets its InitialStock to its Stock and its CreatedAt to
// now, and inserts it. It returns the product as stored.
//
// Errors: ErrInvalid naming the field when p is invalid (nothing is sent to
// the database); ErrAlreadyExists when the id is taken; ErrUnavailable when
// the database cannot be reached.
func (s *Store) Create(ctx context.Context, p Product) (Product, error) {
	if err := validate(&p); err != nil {
		return Product{}, err
	}
	p.InitialStock = p.Stock
	// DATETIME(6) keeps microseconds; truncate so the value read back equals
	// the value returned here.
	p.CreatedAt = time.Now().UTC().Truncate(time.Microsecond)

	row := toRow(p)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return createBuckets(tx, p)
	})
	if err != nil {
		if IsDuplicateKey(err) {
			return Product{}, fmt.Errorf("%w: product %q", ErrAlreadyExists, p.ID)
		}
		return Product{}, translate(err, "create product %q", p.ID)
	}
	return p, nil
}

// Get returns the product with the given id.
//
// Errors: ErrInvalid for a malformed id (nothing is sent to the database);
// ErrNotFound when there is no such product; ErrUnavailable when the
// database cannot be reached.
func (s *Store) Get(ctx context.Context, id string) (Product, error) {
	if err := checkID("id", id); err != nil {
		return Product{}, err
	}
	var row productRow
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Product{}, fmt.Errorf("%w: product %q", ErrNotFound, id)
	}
	if err != nil {
		return Product{}, translate(err, "get product %q", id)
	}
	p, err := row.product()
	if err != nil || !RowBuckets(p) {
		return p, err
	}
	if p.Stock, err = BucketStock(ctx, s.db, id); err != nil {
		return Product{}, translate(err, "get product %q", id)
	}
	return p, nil
}

// productRow maps Product onto the products table, durations as whole
// milliseconds.
type productRow struct {
	ID           string    `gorm:"column:id;primaryKey"`
	Name         string    `gorm:"column:name"`
	Stock        int       `gorm:"column:stock"`
	InitialStock int       `gorm:"column:initial_stock"`
	Strategy     string    `gorm:"column:strategy"`
	LockTTLMs    int64     `gorm:"column:lock_ttl_ms"`
	WorkMs       int64     `gorm:"column:work_ms"`
	StallMs      int64     `gorm:"column:stall_ms"`
	StallRate    float64   `gorm:"column:stall_rate"`
	LateMs       int64     `gorm:"column:late_commit_ms"`
	LateEvery    int       `gorm:"column:late_commit_every"`
	BatchMax     int       `gorm:"column:batch_max"`
	Buckets      int       `gorm:"column:buckets"`
	PayWithinMs  int64     `gorm:"column:pay_within_ms"`
	CreatedAt    time.Time `gorm:"column:created_at"`
}

func (productRow) TableName() string { return "products" }

func toRow(p Product) productRow {
	return productRow{
		ID:           p.ID,
		Name:         p.Name,
		Stock:        p.Stock,
		InitialStock: p.InitialStock,
		Strategy:     string(p.Strategy),
		LockTTLMs:    p.LockTTL.Milliseconds(),
		WorkMs:       p.Work.Milliseconds(),
		StallMs:      p.Stall.Milliseconds(),
		StallRate:    p.StallRate,
		LateMs:       p.LateCommit.Milliseconds(),
		LateEvery:    p.LateCommitEvery,
		BatchMax:     p.BatchMax,
		Buckets:      p.Buckets,
		PayWithinMs:  p.PayWithin.Milliseconds(),
		CreatedAt:    p.CreatedAt,
	}
}

// product converts a row back; a strategy the code no longer knows is an
// error rather than a silent default.
func (r productRow) product() (Product, error) {
	name, err := strategy.Parse(r.Strategy)
	if err != nil {
		return Product{}, fmt.Errorf("stock: product %q: %w", r.ID, err)
	}
	return Product{
		ID:              r.ID,
		Name:            r.Name,
		Stock:           r.Stock,
		InitialStock:    r.InitialStock,
		Strategy:        name,
		LockTTL:         time.Duration(r.LockTTLMs) * time.Millisecond,
		Work:            time.Duration(r.WorkMs) * time.Millisecond,
		Stall:           time.Duration(r.StallMs) * time.Millisecond,
		StallRate:       r.StallRate,
		LateCommit:      time.Duration(r.LateMs) * time.Millisecond,
		LateCommitEvery: r.LateEvery,
		BatchMax:        r.BatchMax,
		Buckets:         r.Buckets,
		PayWithin:       time.Duration(r.PayWithinMs) * time.Millisecond,
		CreatedAt:       r.CreatedAt.UTC(),
	}, nil
}
