package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LockKeysTest {

  @Test
  void empty_key_is_rejected_by_name() {
    assertThatThrownBy(() -> LockKeys.requireValid("", 1024))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lock key is empty");
  }

  @Test
  void null_key_is_a_null_pointer() {
    assertThatThrownBy(() -> LockKeys.requireValid(null, 1024))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("lock key is null");
  }

  @Test
  void over_long_key_names_its_length_and_the_limit_but_not_the_key() {
    String key = "secret-order-" + "x".repeat(1100);
    assertThatThrownBy(() -> LockKeys.requireValid(key, 1024))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lock key is 1113 UTF-8 bytes long; this backend's limit is 1024 bytes")
        .message()
        .doesNotContain("secret");
  }

  @Test
  void unpaired_surrogates_are_rejected_with_their_position() {
    assertThatThrownBy(() -> LockKeys.requireValid("ab\uD83D", 1024))
        .hasMessage(
            "lock key has an unpaired surrogate U+D83D at index 2; keys must be well-formed UTF-16");
    assertThatThrownBy(() -> LockKeys.requireValid("\uDE00ab", 1024))
        .hasMessageContaining("U+DE00 at index 0");
    assertThatThrownBy(() -> LockKeys.requireValid("a\uD83D\uD83D\uDE00", 1024))
        .hasMessageContaining("U+D83D at index 1");
  }

  @Test
  void multi_byte_keys_are_measured_in_utf8_bytes() {
    String key = "é€😀a";
    assertThat(LockKeys.utf8Length(key))
        .isEqualTo(key.getBytes(StandardCharsets.UTF_8).length)
        .isEqualTo(10);
    assertThatCode(() -> LockKeys.requireValid(key, 10)).doesNotThrowAnyException();
    assertThatThrownBy(() -> LockKeys.requireValid(key, 9))
        .hasMessageContaining("10 UTF-8 bytes long");
  }

  @Test
  void control_characters_spaces_and_braces_are_valid() {
    assertThatCode(() -> LockKeys.requireValid(" {a}\n\t\u0001'; DROP TABLE x; --", 1024))
        .doesNotThrowAnyException();
  }
}
