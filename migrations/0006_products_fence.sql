-- The highest fencing token a holder of the product's lock has registered
-- (strategy fenced). A holder registers its token as the first statement
-- of its transaction, UPDATE ... SET fence = ? WHERE id = ? AND fence < ?,
-- and a holder whose token is not higher is refused and writes nothing.
ALTER TABLE products ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
