-- The sweeper's question: which pending orders are past their deadline.
CREATE INDEX orders_state_deadline ON orders (state, deadline_ms);
