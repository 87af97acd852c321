package dev.pubsubworker.plugins.orders;

import java.util.Objects;

/**
 * An order as published: {@code {"orderId": "po-123", "sku": "ABC-1", "quantity": 2}}.
 *
 * @param orderId the business id
 * @param sku the article
 * @param quantity how many, at least 1
 */
public record Order(String orderId, String sku, int quantity) {
  /** Validates the fields. */
  public Order {
    Objects.requireNonNull(orderId, "orderId");
    Objects.requireNonNull(sku, "sku");
  }
}
