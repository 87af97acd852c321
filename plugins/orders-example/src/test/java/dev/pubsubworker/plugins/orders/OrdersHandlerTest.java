package dev.pubsubworker.plugins.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.core.LeaseLostException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class OrdersHandlerTest {

  private final OrderLedger ledger = new OrderLedger();
  private final OrdersHandler handler = new OrdersHandler(ledger, 100);

  private static InboundMessage message(String json, Map<String, String> attributes) {
    return new InboundMessage(
        "m-1", json.getBytes(StandardCharsets.UTF_8), attributes, "", Instant.EPOCH, 1);
  }

  private static HandlerContext context(boolean leaseLost) {
    return new HandlerContext() {
      @Override
      public String subscription() {
        return "orders";
      }

      @Override
      public Optional<String> key() {
        return Optional.of("orders:po-1");
      }

      @Override
      public OptionalLong fencingToken() {
        return OptionalLong.of(7);
      }

      @Override
      public boolean isLeaseLost() {
        return leaseLost;
      }

      @Override
      public void checkLease() {
        if (leaseLost) {
          throw new LeaseLostException("orders:po-1", 7);
        }
      }

      @Override
      public <R> Optional<R> resource(Class<R> type) {
        return Optional.empty();
      }
    };
  }

  @Test
  void an_order_is_placed_through_the_sink() throws Exception {
    handler.handle(
        message("{\"orderId\":\"po-1\",\"sku\":\"A\",\"quantity\":2}", Map.of("order_id", "po-1")),
        context(false));
    assertThat(ledger.placements("po-1")).isEqualTo(1);
  }

  @Test
  void poison_is_acked_without_placing() throws Exception {
    handler.handle(message("not json", Map.of()), context(false));
    handler.handle(
        message("{\"orderId\":\"po-2\",\"sku\":\"A\",\"quantity\":1}", Map.of("order_id", "po-1")),
        context(false));
    handler.handle(
        message("{\"orderId\":\"po-3\",\"sku\":\"A\",\"quantity\":500}", Map.of()), context(false));
    handler.handle(message("{\"sku\":\"A\",\"quantity\":1}", Map.of()), context(false));
    assertThat(ledger.totalPlacements()).isZero();
  }

  @Test
  void a_lost_lease_stops_the_handler_before_the_side_effect() {
    assertThatThrownBy(
            () ->
                handler.handle(
                    message("{\"orderId\":\"po-1\",\"sku\":\"A\",\"quantity\":1}", Map.of()),
                    context(true)))
        .isInstanceOf(LeaseLostException.class);
    assertThat(ledger.totalPlacements()).isZero();
  }
}
