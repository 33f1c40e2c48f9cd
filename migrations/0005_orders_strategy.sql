-- The strategy that guarded the order, renamed as in products.
ALTER TABLE orders RENAME COLUMN lock_mode TO strategy;
