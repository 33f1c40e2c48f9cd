-- One order per buyer and product where unique_buyer is 1; see 0009.
CREATE UNIQUE INDEX orders_unique_buyer ON orders (product_id, user_id, unique_buyer);
