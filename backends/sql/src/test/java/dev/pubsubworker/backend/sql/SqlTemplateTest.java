package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SqlTemplateTest {

  @Test
  @DisplayName("named parameters become positional, in order, repeats included")
  void named_parameters_become_positional() {
    SqlTemplate t = SqlTemplate.parse("SELECT a FROM t WHERE k = :key AND f = :fence OR k = :key");
    assertThat(t.sql()).isEqualTo("SELECT a FROM t WHERE k = ? AND f = ? OR k = ?");
    assertThat(t.names()).containsExactly("key", "fence", "key");
  }

  @Test
  @DisplayName("casts, quoted text and times are left alone")
  void casts_and_literals_are_left_alone() {
    SqlTemplate t =
        SqlTemplate.parse(
            "SELECT NULL::bigint, ':notme', TIMESTAMP '1970-01-01 00:00:00', x FROM t WHERE k=:k_1");
    assertThat(t.sql())
        .isEqualTo(
            "SELECT NULL::bigint, ':notme', TIMESTAMP '1970-01-01 00:00:00', x FROM t WHERE k=?");
    assertThat(t.names()).containsExactly("k_1");
  }

  @Test
  @DisplayName("every statement of every dialect binds the key and never embeds a value")
  void every_statement_binds_its_values() {
    for (SqlDialect d : SqlDialect.values()) {
      SqlStatements s = new SqlStatements(d, "locks");
      for (SqlTemplate t : List.of(s.markDone, s.release, s.extend, s.inspect, s.forget)) {
        assertThat(t.names()).as("%s %s", d, t).contains("key");
        assertThat(t.sql()).doesNotContain(":key");
      }
      assertThat(s.purge.names()).contains("limit", "offset");
    }
  }

  @Test
  @DisplayName("a statement put before a template keeps its parameters and is built once")
  void a_prefixed_template_keeps_its_parameters() {
    SqlTemplate t = SqlTemplate.parse("UPDATE t SET f = :fence WHERE k = :key");
    String prefix = "SELECT set_config('statement_timeout', '5000', true); ";
    SqlTemplate p = t.after(prefix);
    assertThat(p.sql())
        .isEqualTo(
            "SELECT set_config('statement_timeout', '5000', true); UPDATE t SET f = ? WHERE k = ?");
    assertThat(p.names()).containsExactly("fence", "key");
    assertThat(t.after(prefix)).isSameAs(p);
    assertThat(t.sql()).isEqualTo("UPDATE t SET f = ? WHERE k = ?");
  }
}
