package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class UniqueNameTest {

  @Test
  void namesAreUniqueAndFitSqlIdentifiers() {
    Set<String> names = new HashSet<>();
    IntStream.range(0, 1_000).forEach(i -> names.add(TestServices.uniqueName("orders")));

    assertThat(names).hasSize(1_000);
    assertThat(names).allMatch(name -> name.matches("orders_[a-z0-9]{8}_\\d+"));
  }

  @Test
  void longestPrefixStillFitsIdentifierLimits() {
    String prefix = "a".repeat(40);

    assertThat(TestServices.uniqueName(prefix)).hasSizeLessThanOrEqualTo(63);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Orders", "1orders", "or-ders", "or ders", "ünïcode"})
  void badPrefixesAreRejectedWithTheValue(String prefix) {
    assertThatThrownBy(() -> TestServices.uniqueName(prefix))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "prefix must match [a-z][a-z0-9_]* with at most 40 characters, but was '"
                + prefix
                + "'");
  }

  @Test
  void overlongPrefixIsRejected() {
    assertThatThrownBy(() -> TestServices.uniqueName("a".repeat(41)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
