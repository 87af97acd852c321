package dev.pubsubworker.examples.spring.orders;

import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.PoisonMessageException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The side effects that must not happen twice: placing an order and recording a refund, each a row
 * in the application's database written with the claim's fencing token. The guard calls these at
 * most once per key ({@code order_id}, {@code refund_id}); a payload that can never be processed is
 * a {@link PoisonMessageException}, dead-lettered after one attempt.
 */
@Component
public class OrderBook {

  private static final Pattern ORDER = Pattern.compile("(?<sku>[A-Z]-\\d+) x(?<quantity>\\d{1,4})");
  private static final Pattern REFUND = Pattern.compile("(?<cents>\\d{1,9}) cents");

  private final JdbcTemplate jdbc;

  public OrderBook(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  /** Places the order {@code "SKU xQUANTITY"} under its {@code order_id}. */
  public void place(InboundMessage message, HandlerContext context) {
    Matcher m = ORDER.matcher(message.dataAsUtf8());
    if (!m.matches()) {
      throw new PoisonMessageException("order " + message.messageId() + " is not 'SKU xQUANTITY'");
    }
    context.checkLease(); // the last check before the side effect
    jdbc.update(
        "INSERT INTO placed_orders (order_id, sku, quantity, fence) VALUES (?, ?, ?, ?)",
        message.attribute("order_id").orElseThrow(),
        m.group("sku"),
        Integer.parseInt(m.group("quantity")),
        context.fencingToken().orElse(0));
  }

  /** Records the refund {@code "CENTS cents"} under its {@code refund_id}. */
  public void refund(InboundMessage message, HandlerContext context) {
    Matcher m = REFUND.matcher(message.dataAsUtf8());
    if (!m.matches()) {
      throw new PoisonMessageException("refund " + message.messageId() + " is not 'CENTS cents'");
    }
    context.checkLease();
    jdbc.update(
        "INSERT INTO refunds (refund_id, cents, fence) VALUES (?, ?, ?)",
        message.attribute("refund_id").orElseThrow(),
        Long.parseLong(m.group("cents")),
        context.fencingToken().orElse(0));
  }
}
