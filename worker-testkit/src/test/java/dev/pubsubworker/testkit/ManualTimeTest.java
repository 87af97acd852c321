package dev.pubsubworker.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ManualTimeTest {

  private final ManualTime time = new ManualTime(Instant.parse("2030-01-01T00:00:00Z"));
  private final List<String> ran = new CopyOnWriteArrayList<>();

  @Test
  void tasks_run_in_due_order_with_the_clock_at_their_due_time() {
    time.scheduler().schedule(() -> ran.add("b@" + time.now()), 20, TimeUnit.SECONDS);
    time.scheduler().schedule(() -> ran.add("a@" + time.now()), 10, TimeUnit.SECONDS);
    time.advance(Duration.ofSeconds(15));
    assertThat(ran).containsExactly("a@2030-01-01T00:00:10Z");
    time.advance(Duration.ofSeconds(15));
    assertThat(ran).containsExactly("a@2030-01-01T00:00:10Z", "b@2030-01-01T00:00:20Z");
    assertThat(time.now()).isEqualTo(Instant.parse("2030-01-01T00:00:30Z"));
  }

  @Test
  void a_task_scheduled_by_a_task_runs_within_the_same_advance() {
    time.scheduler()
        .schedule(
            () -> {
              ran.add("first");
              time.scheduler().schedule(() -> ran.add("second"), 5, TimeUnit.SECONDS);
            },
            5,
            TimeUnit.SECONDS);
    time.advance(Duration.ofSeconds(10));
    assertThat(ran).containsExactly("first", "second");
  }

  @Test
  void periodic_tasks_repeat_and_cancelled_tasks_do_not_run() {
    ScheduledFuture<?> periodic =
        time.scheduler().scheduleAtFixedRate(() -> ran.add("tick"), 1, 1, TimeUnit.SECONDS);
    ScheduledFuture<?> cancelled =
        time.scheduler().schedule(() -> ran.add("never"), 2, TimeUnit.SECONDS);
    assertThat(cancelled.cancel(false)).isTrue();
    time.advance(Duration.ofSeconds(3));
    assertThat(ran).containsExactly("tick", "tick", "tick");
    periodic.cancel(false);
    time.advance(Duration.ofSeconds(3));
    assertThat(ran).hasSize(3);
    assertThat(time.pendingTasks()).isZero();
  }

  @Test
  void time_never_moves_backwards() {
    assertThatThrownBy(() -> time.advance(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void offset_clock_adds_its_offset_to_real_time() {
    OffsetClock clock = new OffsetClock();
    long before = System.currentTimeMillis();
    clock.advance(Duration.ofHours(1));
    assertThat(clock.millis()).isGreaterThanOrEqualTo(before + 3_600_000);
    assertThat(clock.offset()).isEqualTo(Duration.ofHours(1));
    assertThatThrownBy(() -> clock.advance(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
