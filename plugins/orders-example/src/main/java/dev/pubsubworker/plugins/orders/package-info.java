/**
 * An example handler plugin — the one to copy. It places each order once:
 *
 * <ul>
 *   <li>the subscription keys messages by the business id ({@code key =
 *       "template:orders:{order_id}"}), so a producer that publishes one order twice still places
 *       it once;
 *   <li>the handler hands the key and the fencing token to its {@link
 *       dev.pubsubworker.plugins.orders.OrderSink}, so the sink can de-duplicate too (an
 *       Idempotency-Key header) and refuse a stale writer;
 *   <li>a poison message (a payload that does not parse, or that breaks a business rule) is logged
 *       and returned from normally, so it is acked instead of redelivered forever.
 * </ul>
 */
package dev.pubsubworker.plugins.orders;
