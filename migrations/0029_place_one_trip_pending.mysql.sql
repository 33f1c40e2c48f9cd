-- sql-one-trip's procedure (0023) again, now for a product with a pay
-- window too: the order it writes is pending, its deadline the database's
-- now plus products.pay_within_ms (read on the row the UPDATE has just
-- locked), the one clock of internal/order/life; without a window it is
-- paid, final at once, as before. Steps, outcomes and errors are 0023's;
-- the CALL (orderdb.Writer.CallOneTrip) does not change. An order that ends
-- (expired, cancelled) gives its units back to the product row, as
-- sql-atomic's do. Its string parameters are utf8mb4 and compare byte by
-- byte, as the columns they fill: left to the database's default (latin1
-- on MariaDB before 11.6) a buyer id outside latin1 was refused. MySQL and
-- MariaDB only.
DROP PROCEDURE IF EXISTS place_one_trip;
DELIMITER //
CREATE PROCEDURE place_one_trip(
    IN p_order    CHAR(36)    CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_user     VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_product  VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_quantity INT,
    IN p_strategy VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    IN p_created  DATETIME(6),
    IN p_hold_ms  INT)
sale: BEGIN
    DECLARE v_left INT;
    DECLARE v_within BIGINT;
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
    SELECT pay_within_ms INTO v_within FROM products WHERE id = p_product;
    INSERT INTO orders (id, user_id, product_id, quantity, strategy, created_at, unique_buyer,
            state, deadline_ms)
        SELECT p_order, p_user, p_product, p_quantity, p_strategy, p_created, 1,
            IF(v_within > 0, 'pending', 'paid'),
            IF(v_within > 0, FLOOR(UNIX_TIMESTAMP(NOW(6)) * 1000) + v_within, NULL)
        FROM DUAL
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
