package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Validation of the small values of the port: requests, claims, records. */
class ValuesTest {

  @Test
  void claim_request_rejects_sub_millisecond_durations() {
    assertThatThrownBy(() -> ClaimRequest.of("k", Duration.ofNanos(10), "t"))
        .hasMessage("lease must be >= 1ms, but was PT0.00000001S");
    assertThatThrownBy(() -> new ClaimRequest("k", Duration.ofSeconds(1), Duration.ZERO, "t", null))
        .hasMessage("ttl must be >= 1ms, but was PT0S");
  }

  @Test
  void claim_request_rejects_malformed_tokens_and_fingerprints() {
    assertThatThrownBy(() -> ClaimRequest.of("k", Duration.ofSeconds(1), ""))
        .hasMessage("claimToken must be 1 to 128 characters, but was 0");
    assertThatThrownBy(() -> ClaimRequest.of("k", Duration.ofSeconds(1), "has space"))
        .hasMessage("claimToken must be printable ASCII without spaces, but has U+0020 at index 3");
    assertThatThrownBy(() -> ClaimRequest.of("k", Duration.ofSeconds(1), "t".repeat(129)))
        .hasMessageContaining("but was 129");
    assertThatThrownBy(
            () ->
                new ClaimRequest(
                    "k", Duration.ofSeconds(1), Duration.ofHours(1), "t", "f".repeat(257)))
        .hasMessage("fingerprint must be at most 256 characters, but was 257");
  }

  @Test
  void claim_request_defaults_and_withers() {
    ClaimRequest r = ClaimRequest.of("k", Duration.ofSeconds(5), "tok");
    assertThat(r.ttl()).isEqualTo(IdempotencyGuard.DEFAULT_TTL);
    assertThat(r.fingerprint()).isNull();
  }

  @Test
  void claim_rejects_a_fence_below_one() {
    assertThatThrownBy(() -> new Claim("k", 0, Instant.EPOCH, "t"))
        .hasMessage("fence must be 1..9007199254740991, but was 0");
  }

  @Test
  void record_reclaimable_follows_the_table() {
    Instant t = Instant.parse("2030-01-01T00:00:00Z");
    LockRecord live =
        new LockRecord("k", LockState.CLAIMED, 1, t.plusSeconds(1), t.plusSeconds(9), "x", null, t);
    LockRecord lapsed =
        new LockRecord("k", LockState.CLAIMED, 1, t, t.plusSeconds(9), "x", null, t);
    LockRecord done =
        new LockRecord("k", LockState.DONE, 1, t.minusSeconds(9), t.plusSeconds(1), "x", null, t);
    LockRecord doneExpired =
        new LockRecord("k", LockState.DONE, 1, t.minusSeconds(9), t, "x", null, t);
    assertThat(live.reclaimable()).isFalse();
    assertThat(lapsed.reclaimable()).isTrue();
    assertThat(done.reclaimable()).isFalse();
    assertThat(doneExpired.reclaimable()).isTrue();
  }

  @Test
  void key_in_progress_message_does_not_carry_the_key() {
    KeyInProgressException e =
        new KeyInProgressException(
            "orders:4711", KeyInProgressException.Reason.HELD_BY_OTHER, Instant.EPOCH);
    assertThat(e.getMessage()).doesNotContain("4711");
    assertThat(e.key()).isEqualTo("orders:4711");
  }
}
