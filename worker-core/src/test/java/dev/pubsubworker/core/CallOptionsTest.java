package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The one options model: copies on every setter, per-call options merged over the guard's. */
class CallOptionsTest {

  @Test
  void guard_defaults_are_complete_and_match_the_constants() {
    CallOptions d = CallOptions.GUARD_DEFAULTS;
    assertThat(d.lease).isEqualTo(IdempotencyGuard.DEFAULT_LEASE).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.ttl).isEqualTo(IdempotencyGuard.DEFAULT_TTL).isEqualTo(Duration.ofHours(24));
    assertThat(d.heartbeat).isTrue();
    assertThat(d.interruptOnLeaseLoss).isFalse();
    assertThat(d.fingerprintPolicy).isEqualTo(FingerprintPolicy.REPORT);
    assertThat(d.transactional).isFalse();
    assertThat(d.fingerprint).isNull();
    assertThat(d.onDuplicate).isNull();
    assertThat(ClaimRequest.of("k", Duration.ofSeconds(1), "t").ttl()).isEqualTo(d.ttl);
  }

  @Test
  void setters_return_copies_and_leave_the_original_unchanged() {
    CallOptions none = CallOptions.defaults();
    CallOptions leased = none.lease(Duration.ofMinutes(5));
    CallOptions both = leased.ttl(Duration.ofMinutes(1));
    assertThat(leased).isNotSameAs(none);
    assertThat(none.lease).isNull();
    assertThat(leased.lease).isEqualTo(Duration.ofMinutes(5));
    assertThat(leased.ttl).isNull();
    assertThat(both.lease).isEqualTo(Duration.ofMinutes(5));
    assertThat(both.ttl).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void merge_takes_what_the_call_set_and_the_rest_from_the_defaults() {
    Consumer<String> guardHook = k -> {};
    Consumer<String> callHook = k -> {};
    CallOptions guard =
        CallOptions.GUARD_DEFAULTS.lease(Duration.ofSeconds(10)).onDuplicate(guardHook);
    CallOptions call =
        CallOptions.defaults()
            .ttl(Duration.ofMinutes(2))
            .heartbeat(false)
            .fingerprint("fp")
            .fingerprintPolicy(FingerprintPolicy.REJECT)
            .onDuplicate(callHook);

    CallOptions merged = call.merge(guard);

    assertThat(merged.lease).isEqualTo(Duration.ofSeconds(10));
    assertThat(merged.ttl).isEqualTo(Duration.ofMinutes(2));
    assertThat(merged.heartbeat).isFalse();
    assertThat(merged.interruptOnLeaseLoss).isFalse();
    assertThat(merged.fingerprint).isEqualTo("fp");
    assertThat(merged.fingerprintPolicy).isEqualTo(FingerprintPolicy.REJECT);
    assertThat(merged.onDuplicate).isSameAs(callHook);
    assertThat(merged.transactional).isFalse();
    assertThat(CallOptions.defaults().merge(guard).onDuplicate).isSameAs(guardHook);
  }

  @Test
  void setters_reject_bad_values_with_the_name_and_the_value() {
    assertThatThrownBy(() -> CallOptions.defaults().lease(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lease must be >= 1ms, but was PT0S");
    assertThatThrownBy(() -> CallOptions.defaults().ttl(Duration.ofNanos(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ttl must be >= 1ms, but was PT0.000000001S");
    assertThatThrownBy(() -> CallOptions.defaults().fingerprint(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("fingerprint");
  }
}
