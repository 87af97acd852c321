package dev.pubsubworker.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.GuardListener.Verb;
import dev.pubsubworker.core.LockBackend;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/**
 * When the lock store counts as answering: a probe's read or any guard call that returned, within
 * stale-after; a store without admin verbs (no probe) is judged by the guards' calls alone.
 */
class LockStoreHealthTest {

  private Instant now = Instant.parse("2026-01-01T00:00:00Z");
  private final Clock clock =
      new Clock() {
        @Override
        public Instant instant() {
          return now;
        }

        @Override
        public ZoneOffset getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
          return this;
        }
      };

  @Test
  void a_store_with_admin_verbs_answers_the_probe_until_it_goes_stale() {
    LockStoreHealth health =
        new LockStoreHealth(
            new InMemoryLockBackend(), Duration.ofSeconds(10), Duration.ofSeconds(30), clock);
    assertThat(health.probes()).isTrue();
    assertThat(health.problem())
        .hasValueSatisfying(p -> assertThat(p).contains("not answered yet"));
    health.probeOnce();
    assertThat(health.problem()).isEmpty();
    now = now.plusSeconds(29);
    assertThat(health.problem()).isEmpty();
    health.backendCall(Verb.CLAIM, Duration.ofMillis(3), false);
    now = now.plusSeconds(2);
    assertThat(health.problem()).hasValue("the lock store has not answered for 31s (claim failed)");
    health.backendCall(Verb.COMPLETE, Duration.ofMillis(3), true);
    assertThat(health.problem()).as("a guard call that returned counts").isEmpty();
  }

  @Test
  void a_store_without_admin_verbs_is_judged_by_the_guards_calls() {
    InMemoryLockBackend inner = new InMemoryLockBackend();
    LockBackend noAdmin =
        new LockBackend() {
          @Override
          public ClaimResult claim(ClaimRequest request) {
            return inner.claim(request);
          }

          @Override
          public boolean complete(Claim claim, Duration ttl) {
            return inner.complete(claim, ttl);
          }

          @Override
          public void release(Claim claim) {
            inner.release(claim);
          }

          @Override
          public boolean extend(Claim claim, Duration lease) {
            return inner.extend(claim, lease);
          }
        };
    LockStoreHealth health =
        new LockStoreHealth(noAdmin, Duration.ofSeconds(10), Duration.ofSeconds(30), clock);
    assertThat(health.probes()).isFalse();
    assertThat(health.problem()).as("idle, nothing known against it").isEmpty();
    now = now.plusSeconds(60);
    health.backendCall(Verb.CLAIM, Duration.ofMillis(3), false);
    assertThat(health.problem()).hasValue("the lock store's last call failed (claim failed)");
    now = now.plusSeconds(1);
    health.backendCall(Verb.CLAIM, Duration.ofMillis(3), true);
    assertThat(health.problem()).isEmpty();
  }
}
