-- The application's own tables. No unique key on the business ids, on purpose: the end-to-end
-- test counts rows, so a handler that ran twice would show; the guard keeps each to one.
CREATE TABLE IF NOT EXISTS placed_orders (
  order_id VARCHAR(64) NOT NULL,
  sku VARCHAR(32) NOT NULL,
  quantity INT NOT NULL,
  fence BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
  refund_id VARCHAR(64) NOT NULL,
  cents BIGINT NOT NULL,
  fence BIGINT NOT NULL
);
