-- The order flow asks "does this user already have an order for this
-- product?" and the audit groups orders by product and user: one index
-- serves both. Not unique, see 0002_orders.sql.
CREATE INDEX orders_product_user ON orders (product_id, user_id);
