package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The one set of rules every backend reads a stored record by ({@link LockRecord#parse}). */
class LockRecordParseTest {

  private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
  private static final String WHERE = "claim failed on test store";

  private static Map<String, String> valid() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("state", "DONE");
    f.put("fence", "7");
    f.put("leaseExpiry", "1000");
    f.put("expiresAt", "2000");
    f.put("claimToken", "tok-1");
    f.put("fingerprint", "sha:1");
    return f;
  }

  private static Map<String, String> with(Consumer<Map<String, String>> change) {
    Map<String, String> f = valid();
    change.accept(f);
    return f;
  }

  private static void assertProblem(Map<String, String> fields, String problem) {
    assertThatThrownBy(() -> LockRecord.parse("orders:po-1", fields, NOW, WHERE))
        .isInstanceOfSatisfying(
            InvalidLockRecordException.class,
            e -> {
              assertThat(e.problem()).isEqualTo(problem);
              assertThat(e.key()).isEqualTo("orders:po-1");
              assertThat(e.storedFields()).isEqualTo(fields);
              assertThat(e.getMessage())
                  .startsWith(
                      WHERE + ": the key's record is not one this backend can read (" + problem)
                  .doesNotContain("orders:po-1");
            });
  }

  @Test
  void a_readable_record_parses_with_every_field() {
    Map<String, String> f = valid();
    f.put("somethingElse", "kept for the operator, ignored here");
    LockRecord r = LockRecord.parse("k", f, NOW, WHERE);
    assertThat(r)
        .isEqualTo(
            new LockRecord(
                "k",
                LockState.DONE,
                7,
                Instant.ofEpochMilli(1000),
                Instant.ofEpochMilli(2000),
                "tok-1",
                "sha:1",
                NOW));
    assertThat(LockRecord.parse("k", with(m -> m.remove("claimToken")), NOW, WHERE).claimToken())
        .isNull();
  }

  @Test
  void the_edges_of_the_ranges_are_readable() {
    String max = Long.toString(LockBackend.MAX_FENCE);
    LockRecord r =
        LockRecord.parse(
            "k",
            with(
                m -> {
                  m.put("fence", max);
                  m.put("leaseExpiry", "0");
                  m.put("expiresAt", Long.toString(LockBackend.MAX_EPOCH_MILLIS));
                  m.put("claimToken", "!".repeat(128));
                }),
            NOW,
            WHERE);
    assertThat(r.fence()).isEqualTo(9_007_199_254_740_991L);
    assertThat(LockRecord.parse("k", with(m -> m.put("fence", "1")), NOW, WHERE).fence())
        .isEqualTo(1);
  }

  @Test
  void states_other_than_exactly_claimed_or_done_are_unreadable() {
    assertProblem(with(m -> m.put("state", "X")), "state 'X' is neither CLAIMED nor DONE");
    assertProblem(with(m -> m.put("state", "")), "state '' is neither CLAIMED nor DONE");
    assertProblem(with(m -> m.put("state", "done")), "state 'done' is neither CLAIMED nor DONE");
    assertProblem(with(m -> m.put("state", "DONE ")), "state 'DONE ' is neither CLAIMED nor DONE");
    assertProblem(with(m -> m.remove("state")), "it has no state");
  }

  @Test
  void fences_outside_the_range_or_not_plain_integers_are_unreadable() {
    String range = " is outside 1..9007199254740991";
    assertProblem(with(m -> m.put("fence", "0")), "fence 0" + range);
    assertProblem(with(m -> m.put("fence", "-5")), "fence -5" + range);
    assertProblem(with(m -> m.put("fence", "9007199254740992")), "fence 9007199254740992" + range);
    assertProblem(
        with(m -> m.put("fence", "9223372036854775806")), "fence 9223372036854775806" + range);
    assertProblem(
        with(m -> m.put("fence", "9223372036854775807")), "fence 9223372036854775807" + range);
    assertProblem(
        with(m -> m.put("fence", "99999999999999999999")), "fence 99999999999999999999" + range);
    assertProblem(
        with(m -> m.put("fence", "abc")), "fence 'abc' is not an integer in decimal digits");
    assertProblem(
        with(m -> m.put("fence", "07")), "fence '07' is not an integer in decimal digits");
    assertProblem(
        with(m -> m.put("fence", "+7")), "fence '+7' is not an integer in decimal digits");
    assertProblem(
        with(m -> m.put("fence", " 7")), "fence ' 7' is not an integer in decimal digits");
    assertProblem(with(m -> m.remove("fence")), "it has no fence");
  }

  @Test
  void times_outside_the_range_missing_or_not_integers_are_unreadable() {
    assertProblem(
        with(m -> m.put("leaseExpiry", "-1")), "leaseExpiry -1 is outside 0..9007199254740991");
    assertProblem(
        with(m -> m.put("expiresAt", "9007199254740992")),
        "expiresAt 9007199254740992 is outside 0..9007199254740991");
    assertProblem(
        with(m -> m.put("expiresAt", "soon")),
        "expiresAt 'soon' is not an integer in decimal digits");
    assertProblem(with(m -> m.remove("leaseExpiry")), "it has no leaseExpiry");
    assertProblem(with(m -> m.remove("expiresAt")), "it has no expiresAt");
  }

  @Test
  void malformed_claim_tokens_are_unreadable() {
    assertProblem(
        with(m -> m.put("claimToken", "")), "claimToken must be 1 to 128 characters, but was 0");
    assertProblem(
        with(m -> m.put("claimToken", "t".repeat(129))),
        "claimToken must be 1 to 128 characters, but was 129");
    assertProblem(
        with(m -> m.put("claimToken", "a b")),
        "claimToken must be printable ASCII without spaces, but has U+0020 at index 1");
  }

  @Test
  void quoted_values_are_escaped_and_cut_so_a_message_stays_one_short_line() {
    assertProblem(
        with(m -> m.put("state", "a\nb'\u202e")),
        "state 'a\\u000ab\\u0027\\u202e' is neither CLAIMED nor DONE");
    assertProblem(
        with(m -> m.put("state", "x".repeat(100))),
        "state '" + "x".repeat(40) + "...' is neither CLAIMED nor DONE");
  }

  @Test
  void the_record_constructor_refuses_what_parse_calls_unreadable() {
    Instant t = Instant.ofEpochMilli(1000);
    assertThatThrownBy(() -> new LockRecord("k", LockState.DONE, 0, t, t, null, null, NOW))
        .hasMessage("fence 0 is outside 1..9007199254740991");
    assertThatThrownBy(
            () ->
                new LockRecord(
                    "k", LockState.DONE, LockBackend.MAX_FENCE + 1, t, t, null, null, NOW))
        .hasMessageContaining("is outside 1..9007199254740991");
    assertThatThrownBy(
            () ->
                new LockRecord(
                    "k", LockState.DONE, 1, Instant.ofEpochMilli(-1), t, null, null, NOW))
        .hasMessageContaining("leaseExpiry 1969-12-31T23:59:59.999Z is outside 0..");
    assertThatThrownBy(() -> new LockRecord("k", LockState.DONE, 1, t, t, "a b", null, NOW))
        .hasMessageContaining("claimToken must be printable ASCII without spaces, but has U+0020");
    assertThatThrownBy(() -> new Claim("k", LockBackend.MAX_FENCE + 1, Instant.EPOCH, "t"))
        .hasMessage("fence must be 1..9007199254740991, but was 9007199254740992");
  }
}
