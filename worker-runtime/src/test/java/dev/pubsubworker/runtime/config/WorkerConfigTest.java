package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerConfigTest {

  @TempDir Path dir;

  private WorkerConfig load(String hocon) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(file, hocon);
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  private List<String> problems(String hocon) throws IOException {
    try {
      load(hocon);
    } catch (InvalidConfigException e) {
      // Origins name the file by its full path; the assertions use the bare file name.
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    throw new AssertionError("expected the config to be invalid");
  }

  private static final String MINIMAL =
      """
      pubsub-worker {
        project-id = "demo-project"
        subscriptions { orders { name = "orders-sub", handler = "orders" } }
      }
      """;

  @Test
  void minimal_config_gets_every_default_from_reference_conf() throws IOException {
    WorkerConfig c = load(MINIMAL);
    assertThat(c.projectId()).isEqualTo("demo-project");
    assertThat(c.shutdownGrace()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.lockStore().type()).isEqualTo(LockStoreType.IN_MEMORY);
    SubscriptionConfig s = c.subscriptions().get("orders");
    assertThat(s.name()).isEqualTo("orders-sub");
    assertThat(s.handler()).isEqualTo("orders");
    assertThat(s.guard().mode()).isEqualTo(GuardMode.LOCK);
    assertThat(s.guard().key()).isEqualTo(new KeySpec.MessageId());
    assertThat(s.guard().lease()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.guard().ttl()).isEqualTo(Duration.ofHours(24));
    assertThat(s.guard().heartbeat()).isTrue();
    assertThat(s.guard().allowUnguarded()).isFalse();
    assertThat(s.client().exactlyOnce()).isEqualTo(ExactlyOnceMode.AUTO);
    assertThat(s.client().maxOutstandingMessages()).isEqualTo(1000);
    assertThat(s.client().maxOutstandingBytes()).isEqualTo(100L * 1024 * 1024);
    assertThat(s.client().parallelPullCount()).isEqualTo(1);
    assertThat(s.client().executorThreads()).isEqualTo(5);
    assertThat(s.client().maxAckExtension()).isEqualTo(Duration.ofMinutes(60));
    assertThat(s.client().minAckExtension()).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void subscription_settings_override_the_defaults_and_the_name_defaults_to_the_id()
      throws IOException {
    WorkerConfig c =
        load(
            """
            pubsub-worker {
              project-id = p
              subscription-defaults { lease = 10s, executor-threads = 2 }
              subscriptions {
                po-updates {
                  handler = updates
                  guard = mutex
                  key = "template:po:{po_id}"
                  lease = 2m
                  flow-control { max-outstanding-messages = 10 }
                }
              }
            }
            """);
    SubscriptionConfig s = c.subscriptions().get("po-updates");
    assertThat(s.name()).isEqualTo("po-updates");
    assertThat(s.guard().mode()).isEqualTo(GuardMode.MUTEX);
    assertThat(s.guard().lease()).isEqualTo(Duration.ofMinutes(2));
    assertThat(s.client().executorThreads()).isEqualTo(2);
    assertThat(s.client().maxOutstandingMessages()).isEqualTo(10);
    assertThat(s.client().maxOutstandingBytes()).isEqualTo(100L * 1024 * 1024);
    assertThat(s.guard().key().text()).isEqualTo("template:po:{po_id}");
  }

  @Test
  void keys_are_stored_under_the_subscription_id_unless_a_key_namespace_is_shared()
      throws IOException {
    WorkerConfig c =
        load(
            """
            pubsub-worker {
              project-id = p
              subscriptions {
                orders { handler = h }
                audit { handler = h, key-namespace = shared }
                billing { handler = h, key-namespace = shared }
              }
            }
            """);
    assertThat(c.subscriptions().get("orders").guard().keyNamespace()).isEqualTo("orders");
    assertThat(c.subscriptions().get("orders").storedKey("po-7")).isEqualTo("orders:po-7");
    assertThat(c.subscriptions().get("audit").storedKey("orders:po-7"))
        .isEqualTo("shared:orders:po-7")
        .isEqualTo(c.subscriptions().get("billing").storedKey("orders:po-7"));
  }

  @Test
  void subscriptions_keep_the_order_they_appear_in_the_config() throws IOException {
    WorkerConfig c =
        load(
            """
            pubsub-worker {
              project-id = p
              subscriptions {
                zeta { handler = h }
                alpha { handler = h }
                mid { handler = h }
                beta { handler = h }
              }
            }
            """);
    assertThat(c.subscriptions().keySet()).containsExactly("zeta", "alpha", "mid", "beta");
    assertThat(c.orderedSubscriptions())
        .extracting(SubscriptionConfig::id)
        .containsExactly("zeta", "alpha", "mid", "beta");
    assertThatThrownBy(() -> c.subscriptions().clear())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void a_key_namespace_with_a_colon_is_refused_so_stored_keys_stay_unambiguous()
      throws IOException {
    assertThat(
            problems(
                """
                pubsub-worker {
                  project-id = p
                  subscriptions {
                    a { handler = h, key-namespace = "orders:x" }
                    "b:c" { handler = h }
                  }
                }
                """))
        .contains(
            "pubsub-worker.subscriptions.a.key-namespace: must be 1-100 letters, digits, '.', '_'"
                + " or '-' (no ':'), but was 'orders:x' (worker.conf:4)")
        .anySatisfy(
            p ->
                assertThat(p)
                    .contains(
                        "key-namespace: defaults to the subscription id, but 'b:c' is not a valid"
                            + " namespace"));
  }

  @Test
  void every_problem_is_reported_at_once_with_its_path_and_origin() throws IOException {
    List<String> problems =
        problems(
            """
            pubsub-worker {
              project-id = ""
              shutdown-grace = soon
              lock-store { type = mongodb }
              unknown-thing = 1
              subscriptions {
                orders {
                  handler = orders
                  leese = 30s
                  lease = -5s
                  ttl = forever
                  guard = maybe
                  key = "template:constant"
                  executor-threads = zero
                  heartbeat = "sometimes"
                  flow-control { max-outstanding-messages = 0, max-outstanding-bytes = lots }
                }
              }
            }
            """);
    assertThat(problems)
        .anySatisfy(p -> assertThat(p).startsWith("pubsub-worker.project-id: is required"))
        .contains(
            "pubsub-worker.shutdown-grace: expected a duration such as 30s, 5m or 24h, but got"
                + " 'soon' (worker.conf:3)",
            "pubsub-worker.lock-store.type: must be one of in-memory | redis | sql | datastore, but"
                + " was 'mongodb' (worker.conf:4)",
            "pubsub-worker.unknown-thing: unknown setting (worker.conf:5)",
            "pubsub-worker.subscriptions.orders.leese: unknown setting (worker.conf:9)",
            "pubsub-worker.subscriptions.orders.lease: must be at least 1s, but was '-5s'"
                + " (worker.conf:10)",
            "pubsub-worker.subscriptions.orders.ttl: expected a duration such as 30s, 5m or 24h, but"
                + " got 'forever' (worker.conf:11)",
            "pubsub-worker.subscriptions.orders.guard: must be one of lock | mutex | none, but was"
                + " 'maybe' (worker.conf:12)",
            "pubsub-worker.subscriptions.orders.key: template has no {placeholder}: every message"
                + " would share one key (worker.conf:13)",
            "pubsub-worker.subscriptions.orders.executor-threads: expected a whole number, but got"
                + " 'zero' (worker.conf:14)",
            "pubsub-worker.subscriptions.orders.heartbeat: expected true or false, but got"
                + " 'sometimes' (worker.conf:15)",
            "pubsub-worker.subscriptions.orders.flow-control.max-outstanding-messages: must be in"
                + " 1..1000000, but was 0 (worker.conf:16)",
            "pubsub-worker.subscriptions.orders.flow-control.max-outstanding-bytes: expected a size"
                + " such as 100m or 512KiB, but got 'lots' (worker.conf:16)");
    assertThat(problems).hasSize(13);
  }

  @Test
  void a_missing_file_and_a_syntax_error_are_one_line_each() throws IOException {
    assertThatThrownBy(
            () -> WorkerConfig.loadFile(dir.resolve("nope.conf"), getClass().getClassLoader()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("no such file");
    assertThat(problems("pubsub-worker { project-id = p\n subscriptions {"))
        .singleElement()
        .satisfies(p -> assertThat(p).startsWith("config file: ").contains("worker.conf"));
  }

  @Test
  void an_empty_subscription_set_is_an_error() throws IOException {
    assertThat(problems("pubsub-worker.project-id = p"))
        .containsExactly(
            "pubsub-worker.subscriptions: is empty: configure at least one subscription");
  }

  @Test
  void transactional_needs_the_sql_store_and_a_lock_guard() throws IOException {
    assertThat(
            problems(
                """
                pubsub-worker {
                  project-id = p
                  subscriptions { a { handler = h, transactional = true, guard = mutex } }
                }
                """))
        .containsExactly(
            "pubsub-worker.subscriptions.a.transactional: needs lock-store.type = sql, but it is"
                + " in-memory (worker.conf:3)",
            "pubsub-worker.subscriptions.a.transactional: applies to guard = lock only"
                + " (worker.conf:3)");
  }

  @Test
  void a_choice_that_is_not_a_string_is_one_problem() throws IOException {
    assertThat(
            problems(
                """
                pubsub-worker {
                  project-id = p
                  lock-store.type = [sql]
                  subscriptions { a { handler = h, guard = { x = 1 } } }
                }
                """))
        .hasSize(2)
        .anySatisfy(p -> assertThat(p).startsWith("pubsub-worker.lock-store.type: "))
        .anySatisfy(p -> assertThat(p).startsWith("pubsub-worker.subscriptions.a.guard: "))
        .noneMatch(p -> p.contains("must be one of"));
  }

  @Test
  void two_entries_on_one_subscription_are_an_error() throws IOException {
    assertThat(
            problems(
                """
                pubsub-worker {
                  project-id = p
                  subscriptions {
                    a { name = s, handler = h }
                    b { name = s, handler = h }
                  }
                }
                """))
        .containsExactly(
            "pubsub-worker.subscriptions.b.name: subscription 's' is also used by"
                + " subscriptions.a (worker.conf:5)");
  }

  @Test
  void unknown_handlers_are_reported_with_the_handlers_that_exist() throws IOException {
    WorkerConfig c = load(MINIMAL);
    assertThatThrownBy(() -> c.requireHandlers(List.of("audit", "billing")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(p -> p.toString().replace(dir + "/", ""))
                    .containsExactly(
                        "pubsub-worker.subscriptions.orders.handler: no plugin binds a handler"
                            + " named 'orders'; handlers found: audit, billing (worker.conf:3)"));
  }

  @Test
  void secrets_are_masked_when_printed() throws IOException {
    WorkerConfig c =
        load(
            MINIMAL
                + """
                pubsub-worker.lock-store.redis.uri = "rediss://worker:s3cret@redis.internal:6380"
                pubsub-worker.lock-store.sql.password = "hunter2"
                """);
    assertThat(c.lockStore().redis().toString())
        .contains("rediss://worker:***@redis.internal:6380")
        .doesNotContain("s3cret");
    assertThat(c.lockStore().sql().toString()).doesNotContain("hunter2");
  }

  @Test
  void environment_overrides_come_through_substitutions() {
    WorkerConfig c =
        WorkerConfig.load(
            ConfigFactory.parseString(
                    """
                    pubsub-worker.subscriptions { a { handler = h } }
                    """)
                .withFallback(ConfigFactory.parseString("pubsub-worker.project-id = from-env"))
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    assertThat(c.projectId()).isEqualTo("from-env");
  }

  @Test
  void plugin_settings_are_handed_out_by_plugin_name() throws IOException {
    WorkerConfig c = load(MINIMAL + "pubsub-worker.plugins.audit-log { level = high }\n");
    assertThat(c.pluginConfig("audit-log").getString("level")).isEqualTo("high");
    assertThat(c.pluginConfig("other").isEmpty()).isTrue();
  }
}
