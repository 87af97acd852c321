package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check-config} prints, under each subscription, the longest a message waits after a crash
 * before it runs again, derived from that subscription's effective settings (defaults, overrides,
 * exactly-once mode, guard, lease, stream ack deadline).
 */
class CheckConfigCrashRecoveryTest {

  @TempDir Path dir;

  @Test
  void each_subscription_gets_its_worst_case_wait_after_a_crash() throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = shop
          subscription-defaults.lease = 20s
          subscriptions {
            orders { handler = orders }
            payments {
              handler = orders
              exactly-once = on
              lease = 2m
            }
            audit {
              handler = orders
              guard = none
              exactly-once = off
              max-ack-extension-per-call = 600s
            }
            slow {
              handler = orders
              min-ack-extension = 20s
              max-ack-extension-per-call = 45s
              in-progress-max-wait = 0s
            }
          }
        }
        """);
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out())
        .contains(
            """
              orders: orders -> handler orders, guard lock, key message-id, lease 20s, ttl 24h, exactly-once auto
                after a crash: messages run again within 61.05s = max(ack deadline 60s, lease 20s) + claim retry 1.05s; stream ack deadline 60s, extensions 10s..60s, 60s with exactly-once
            """)
        .contains(
            """
                after a crash: messages run again within 121.05s = max(ack deadline 60s, lease 120s) + claim retry 1.05s; stream ack deadline 60s, extensions 60s (exactly-once)
            """)
        .contains(
            """
                after a crash: messages run again within 600s = ack deadline 600s (guard none); stream ack deadline 600s, extensions 10s..600s
            """)
        .contains(
            """
                after a crash: messages run again within 46.05s = max(ack deadline 45s, lease 20s) + claim retry 1.05s + the subscription's retry backoff (in-progress-max-wait is below the lease, so a redelivery can be nacked while its key is still held); stream ack deadline 45s, extensions 10s..45s, 20s..45s with exactly-once
            """);
  }
}
