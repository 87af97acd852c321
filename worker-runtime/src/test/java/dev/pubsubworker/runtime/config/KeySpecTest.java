package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class KeySpecTest {

  private static final Map<String, String> ATTRS = Map.of("po_id", "4711", "region", "eu");

  @Test
  void message_id_and_attribute_keys() {
    assertThat(KeySpec.parse("message-id").resolve("m-1", ATTRS, "")).contains("m-1");
    assertThat(KeySpec.parse("attribute:po_id").resolve("m-1", ATTRS, "")).contains("4711");
    assertThat(KeySpec.parse("attribute:missing").resolve("m-1", ATTRS, "")).isEmpty();
    assertThat(KeySpec.parse("attribute:po_id").resolve("m-1", Map.of("po_id", ""), "")).isEmpty();
  }

  @Test
  void templates_combine_literals_attributes_and_message_fields() {
    KeySpec t = KeySpec.parse("template:orders:{region}/{po_id}#{message-id}@{ordering-key}");
    assertThat(t.resolve("m-1", ATTRS, "ok-7")).contains("orders:eu/4711#m-1@ok-7");
    assertThat(t.resolve("m-1", ATTRS, "")).isEmpty();
    assertThat(KeySpec.parse("template:{{literal}} {po_id}").resolve("m", ATTRS, ""))
        .contains("{literal} 4711");
  }

  @Test
  void malformed_specs_say_what_is_wrong() {
    assertThatThrownBy(() -> KeySpec.parse("attribute:"))
        .hasMessageContaining("needs an attribute name");
    assertThatThrownBy(() -> KeySpec.parse("template:orders"))
        .hasMessageContaining("no {placeholder}");
    assertThatThrownBy(() -> KeySpec.parse("template:orders:{po_id"))
        .hasMessageContaining("unclosed '{' at index 7");
    assertThatThrownBy(() -> KeySpec.parse("template:a}b{c}"))
        .hasMessageContaining("unmatched '}' at index 1");
    assertThatThrownBy(() -> KeySpec.parse("template:{}"))
        .hasMessageContaining("empty placeholder");
    assertThatThrownBy(() -> KeySpec.parse("po_id"))
        .hasMessage("must be message-id, attribute:NAME or template:TEXT, but was 'po_id'");
  }
}
