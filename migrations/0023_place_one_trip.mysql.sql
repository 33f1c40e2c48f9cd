-- sql-one-trip's sale (internal/order/onetrip.go) as one stored procedure,
-- so that the shop sends it in one round trip and the product's row lock is
-- held for the server's own time only, never for a trip to the shop. It is
-- sql-atomic's transaction, ordered so that a call holds the row from its
-- first statement to its end:
--   1. the conditional UPDATE takes the units (sold out: none left);
--   2. the order's INSERT; orders_unique_buyer refuses a second order of
--      the buyer (duplicate), and an order id in reclaimed is refused
--      (void): a shop that lost this call's answer settled it as never
--      written (orderdb.Writer.AfterCallFailure), on the same row;
--   3. COMMIT, after p_hold_ms (the late-commit fault; 0 in a sale).
-- Every way out but the COMMIT rolls back in the server: the handlers
-- roll back and answer, so no failure leaves a transaction open on the
-- connection. It answers one row: outcome (placed, sold_out, duplicate,
-- void) and the product's stock left (NULL for duplicate and void).
-- Other errors (a deadlock, a lock wait timeout) are rolled back and
-- signalled again as they were. MySQL and MariaDB only (SQLite has no
-- procedures, and no network to save a trip on).
DROP PROCEDURE IF EXISTS place_one_trip;
DELIMITER //
CREATE PROCEDURE place_one_trip(
    IN p_order    CHAR(36),
    IN p_user     VARCHAR(64),
    IN p_product  VARCHAR(64),
    IN p_quantity INT,
    IN p_strategy VARCHAR(16),
    IN p_created  DATETIME(6),
    IN p_hold_ms  INT)
sale: BEGIN
    DECLARE v_left INT;
    DECLARE EXIT HANDLER FOR 1062
    BEGIN
        ROLLBACK;
        SELECT 'duplicate' AS outcome, NULL AS stock_left;
    END;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION
    BEGIN
        ROLLBACK;
        RESIGNAL;
    END;
    START TRANSACTION;
    UPDATE products SET stock = stock - p_quantity
        WHERE id = p_product AND stock >= p_quantity;
    IF ROW_COUNT() = 0 THEN
        ROLLBACK;
        SELECT 'sold_out' AS outcome,
            (SELECT stock FROM products WHERE id = p_product) AS stock_left;
        LEAVE sale;
    END IF;
    INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at, unique_buyer)
        SELECT p_order, p_user, p_product, p_quantity, p_strategy, p_created, 1 FROM DUAL
        WHERE NOT EXISTS (SELECT 1 FROM reclaimed WHERE id = p_order);
    IF ROW_COUNT() = 0 THEN
        ROLLBACK;
        SELECT 'void' AS outcome, NULL AS stock_left;
        LEAVE sale;
    END IF;
    SELECT stock INTO v_left FROM products WHERE id = p_product;
    IF p_hold_ms > 0 THEN
        DO SLEEP(p_hold_ms / 1000);
    END IF;
    COMMIT;
    SELECT 'placed' AS outcome, v_left AS stock_left;
END //
DELIMITER ;
