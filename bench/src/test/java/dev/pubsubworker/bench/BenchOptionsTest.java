package dev.pubsubworker.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The benchmarks' command lines: defaults, lists that replace them, help, and refusals. */
class BenchOptionsTest {

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int parse(Object options, String... args) {
    return BenchOptions.parse(options, args, new PrintWriter(out), new PrintWriter(err));
  }

  @Test
  void defaults_hold_until_an_option_replaces_them() {
    PeerLockBenchmark.Options defaults = new PeerLockBenchmark.Options();
    assertThat(parse(defaults)).isEqualTo(-1);
    assertThat(defaults.threads).containsExactly(1, 8);
    assertThat(defaults.stores).containsExactly("redis", "postgresql");

    PeerLockBenchmark.Options given = new PeerLockBenchmark.Options();
    assertThat(parse(given, "--threads", "2,4", "--stores", "redis", "--latency-ms", "0.25"))
        .isEqualTo(-1);
    assertThat(given.threads).containsExactly(2, 4);
    assertThat(given.stores).containsExactly("redis");
    assertThat(given.latencyMs).isEqualTo(0.25);
  }

  @Test
  void durations_read_as_the_config_writes_them() {
    ParkingBenchmark.Options o = new ParkingBenchmark.Options();
    assertThat(parse(o, "--lease", "500ms", "--work", "2s")).isEqualTo(-1);
    assertThat(o.lease).isEqualTo(Duration.ofMillis(500));
    assertThat(o.work).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void variants_are_read_by_label() {
    EndToEndBenchmark.Options o = new EndToEndBenchmark.Options();
    assertThat(parse(o, "--variants", "bare,redis")).isEqualTo(-1);
    assertThat(o.variants)
        .containsExactly(EndToEndBenchmark.Variant.BARE, EndToEndBenchmark.Variant.REDIS);
  }

  @Test
  void help_prints_the_usage_and_exits_zero() {
    assertThat(parse(new RoundTripBenchmark.Options(), "--help")).isZero();
    assertThat(out.toString()).startsWith("Usage: RoundTripBenchmark").contains("--latency-ms");
  }

  @Test
  void an_unknown_option_or_a_bad_value_is_one_line_then_the_usage_and_exit_two() {
    for (List<String> args :
        List.of(
            List.of("--bogus"),
            List.of("--messages", "many"),
            List.of("--rounds"),
            List.of("--emulator", "h:1", "extra"))) {
      err.getBuffer().setLength(0);
      assertThat(parse(new PubSubDrainBenchmark.Options(), args.toArray(String[]::new)))
          .as(args.toString())
          .isEqualTo(2);
      assertThat(err.toString()).as(args.toString()).startsWith("PubSubDrainBenchmark: ");
      assertThat(err.toString().lines().skip(1).findFirst().orElse(""))
          .startsWith("Usage: PubSubDrainBenchmark");
    }
  }
}
