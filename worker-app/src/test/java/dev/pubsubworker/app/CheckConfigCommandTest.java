package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check-config} with the example plugin on the class path, as it names the plugins it found.
 * (The runtime's CheckConfigCommandTest has the other cases.)
 */
class CheckConfigCommandTest {

  @TempDir Path dir;

  private Path write(String hocon) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(file, hocon);
    return file;
  }

  @Test
  void a_valid_config_prints_what_it_resolved_to() throws IOException {
    Path file =
        write(
            """
            pubsub-worker {
              project-id = shop
              pubsub-emulator-host = "127.0.0.1:1"
              lock-store.redis.uri = "redis://worker:s3cret@redis:6379"
              subscriptions {
                orders { name = orders-sub, handler = orders, key = "template:orders:{order_id}" }
              }
            }
            """);
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("config OK")
        .contains("project:      shop")
        .contains("emulator at 127.0.0.1:1")
        .contains("shutdown:     grace 30s")
        .contains("orders-example (dev.pubsubworker.plugins.orders.OrdersPlugin, class path)")
        .contains(
            "orders: orders-sub -> handler orders, guard lock, key template:orders:{order_id},"
                + " lease 30s, ttl 24h, exactly-once auto")
        .doesNotContain("s3cret");
    assertThat(run.err()).isEmpty();
  }
}
