package dev.pubsubworker.backend.datastore;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class KeyNamesTest {

  @Test
  void reserved_and_escape_keys_get_one_tilde_everything_else_is_verbatim() {
    assertThat(KeyNames.toName("__x__")).isEqualTo("~__x__");
    assertThat(KeyNames.toName("____")).isEqualTo("~____");
    assertThat(KeyNames.toName("~a")).isEqualTo("~~a");
    assertThat(KeyNames.toName("__")).isEqualTo("__");
    assertThat(KeyNames.toName("___")).isEqualTo("___");
    assertThat(KeyNames.toName("orders/123")).isEqualTo("orders/123");
  }

  @Test
  void the_mapping_round_trips_and_is_injective() {
    List<String> keys = List.of("__x__", "~__x__", "~", "~~", "a", "__a\n__", "_x_", "x~");
    for (String k : keys) {
      assertThat(KeyNames.toKey(KeyNames.toName(k))).isEqualTo(k);
    }
    assertThat(keys.stream().map(KeyNames::toName).distinct()).hasSize(keys.size());
  }
}
