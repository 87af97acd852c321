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
  void names_are_unique_and_fit_sql_identifiers() {
    Set<String> names = new HashSet<>();
    IntStream.range(0, 1_000).forEach(i -> names.add(TestServices.uniqueName("orders")));

    assertThat(names).hasSize(1_000);
    assertThat(names).allMatch(name -> name.matches("orders_[a-z0-9]{8}_\\d+"));
  }

  @Test
  void longest_prefix_still_fits_identifier_limits() {
    String prefix = "a".repeat(40);

    assertThat(TestServices.uniqueName(prefix)).hasSizeLessThanOrEqualTo(63);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Orders", "1orders", "or-ders", "or ders", "ünïcode"})
  void bad_prefixes_are_rejected_with_the_value(String prefix) {
    assertThatThrownBy(() -> TestServices.uniqueName(prefix))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "prefix must match [a-z][a-z0-9_]* with at most 40 characters, but was '"
                + prefix
                + "'");
  }

  @Test
  void overlong_prefix_is_rejected() {
    assertThatThrownBy(() -> TestServices.uniqueName("a".repeat(41)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
