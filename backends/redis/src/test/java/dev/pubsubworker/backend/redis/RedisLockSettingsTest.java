package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.SslOptions;
import java.time.Duration;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;

class RedisLockSettingsTest {

  @Test
  void defaults_are_documented_values() {
    RedisLockSettings s = RedisLockSettings.newBuilder().build();
    assertThat(s.endpoint()).isEqualTo("redis://127.0.0.1:6379/0");
    assertThat(s.keyPrefix()).isEqualTo(RedisLockSettings.DEFAULT_KEY_PREFIX);
    assertThat(s.hashTag()).isEmpty();
    assertThat(s.commandTimeout()).isEqualTo(RedisLockSettings.DEFAULT_COMMAND_TIMEOUT);
    assertThat(s.connectTimeout()).isEqualTo(RedisLockSettings.DEFAULT_CONNECT_TIMEOUT);
    assertThat(s.clientName()).isEqualTo(RedisLockSettings.DEFAULT_CLIENT_NAME);
    assertThat(s.tls()).isFalse();
    assertThat(s.clockOffset().getAsLong()).isZero();
  }

  @Test
  void uri_forms_are_accepted_and_credentials_never_shown() {
    RedisLockSettings acl =
        RedisLockSettings.newBuilder()
            .uri("redis://svc-orders:s3cret@redis.internal:6380/2")
            .build();
    assertThat(acl.endpoint()).isEqualTo("redis://redis.internal:6380/2");
    assertThat(acl.toString()).doesNotContain("s3cret").doesNotContain("svc-orders");

    RedisLockSettings tls = RedisLockSettings.newBuilder().uri("rediss://:pw@cache:6379").build();
    assertThat(tls.tls()).isTrue();
    assertThat(tls.endpoint()).isEqualTo("rediss://cache:6379/0");

    RedisLockSettings sentinel =
        RedisLockSettings.newBuilder().uri("redis-sentinel://s1:26379,s2:26379/0#mymaster").build();
    assertThat(sentinel.endpoint()).isEqualTo("redis-sentinel://2 sentinel(s), master mymaster/0");

    RedisLockSettings socket =
        RedisLockSettings.newBuilder().uri("redis-socket:///var/run/redis.sock").build();
    assertThat(socket.endpoint()).startsWith("redis-socket:///var/run/redis.sock");
  }

  @Test
  void bad_uris_are_rejected_without_echoing_the_password() {
    assertRejected(
        () -> RedisLockSettings.newBuilder().uri("http://user:s3cret@host:6379"),
        "scheme was 'http'");
    assertRejected(() -> RedisLockSettings.newBuilder().uri("   "), "uri is empty");
    assertRejected(
        () -> RedisLockSettings.newBuilder().uri("redis://user:s3cret@ho st:6379"),
        "not a valid URI");
    assertRejected(() -> RedisLockSettings.newBuilder().uri("127.0.0.1:6379"), "scheme");
    assertRejected(
        () -> RedisLockSettings.newBuilder().uri("redis://:s3cret@host:notaport"),
        "no valid host[:port]");
    assertRejected(() -> RedisLockSettings.newBuilder().uri("redis://"), "Expected authority");
    for (String bad :
        new String[] {
          "http://user:s3cret@host", "redis://user:s3cret@ho st", "redis://:s3cret@host:notaport"
        }) {
      assertThatThrownBy(() -> RedisLockSettings.newBuilder().uri(bad))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> RedisLockSettings.newBuilder().uri(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .message()
          .doesNotContain("s3cret");
    }
    assertThatThrownBy(() -> RedisLockSettings.newBuilder().uri(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("uri");
  }

  @Test
  void forms_the_driver_would_misread_are_rejected_without_the_password() {
    // An unencoded '#', '?' or '/' ends the authority: the password's tail and the host would
    // become fragment, query or path, and the driver would connect elsewhere without it.
    for (String bad :
        new String[] {
          "redis://:s3#cret@host:6379", "redis://u:s3?cret@host:6379", "rediss://u:s3/cret@host"
        }) {
      assertThatThrownBy(() -> RedisLockSettings.newBuilder().uri(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("has an '@' after the host: percent-encode")
          .message()
          .doesNotContain("cret");
    }
    // Lettuce reads no password parameter.
    for (String bad :
        new String[] {
          "redis://host:6379?password=s3cret", "redis://host:6379/0?timeout=5s&PASSWORD=s3cret"
        }) {
      assertThatThrownBy(() -> RedisLockSettings.newBuilder().uri(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("parameter, which the Redis driver ignores")
          .message()
          .doesNotContain("s3cret");
    }
    assertThat(
            RedisLockSettings.newBuilder()
                .uri("redis://u:s3%23c%3Fr%2Fe%40t@host:6379/0?timeout=5s")
                .build()
                .redisUri()
                .getCredentialsProvider()
                .resolveCredentials()
                .block()
                .getPassword())
        .containsExactly("s3#c?r/e@t".toCharArray());
  }

  @Test
  void key_prefix_and_hash_tag_are_validated() {
    assertRejected(() -> RedisLockSettings.newBuilder().keyPrefix(""), "keyPrefix must be 1 to");
    assertRejected(() -> RedisLockSettings.newBuilder().keyPrefix("x".repeat(257)), "but was 257");
    assertRejected(
        () -> RedisLockSettings.newBuilder().keyPrefix("my locks:"), "U+0020 at index 2");
    assertRejected(() -> RedisLockSettings.newBuilder().keyPrefix("lücke:"), "U+00FC");
    assertRejected(
        () -> RedisLockSettings.newBuilder().keyPrefix("locks:{a}:"), "hashTag(...)", "braces");
    assertRejected(() -> RedisLockSettings.newBuilder().hashTag("a}b"), "hashTag must not");
    assertRejected(() -> RedisLockSettings.newBuilder().hashTag(""), "hashTag must be 1 to");
    RedisLockSettings s =
        RedisLockSettings.newBuilder().keyPrefix("orders:*[lock]?:").hashTag("locks").build();
    assertThat(s.namespace()).isEqualTo("orders:*[lock]?:{locks}");
    assertThat(s.toBuilder().hashTag(null).build().namespace()).isEqualTo("orders:*[lock]?:");
  }

  @Test
  void timeouts_and_client_name_are_validated() {
    assertRejected(
        () -> RedisLockSettings.newBuilder().commandTimeout(Duration.ZERO),
        "commandTimeout must be >= 1ms, but was PT0S");
    assertRejected(
        () -> RedisLockSettings.newBuilder().connectTimeout(Duration.ofMillis(-5)),
        "connectTimeout must be >= 1ms");
    assertRejected(
        () -> RedisLockSettings.newBuilder().commandTimeout(Duration.ofMinutes(11)),
        "commandTimeout must be between",
        "PT10M, but was PT11M");
    assertRejected(
        () -> RedisLockSettings.newBuilder().clientName("worker one"), "clientName", "U+0020");
    assertRejected(() -> RedisLockSettings.newBuilder().clientName(""), "clientName must be 1");
    RedisLockSettings s =
        RedisLockSettings.newBuilder()
            .commandTimeout(Duration.ofMillis(250))
            .connectTimeout(Duration.ofSeconds(1))
            .clientName("orders-worker-7")
            .build();
    assertThat(s.commandTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(s.connectTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(s.clientName()).isEqualTo("orders-worker-7");
  }

  @Test
  void ssl_options_need_a_tls_uri() {
    SslOptions ssl = SslOptions.builder().jdkSslProvider().build();
    assertRejected(
        () -> RedisLockSettings.newBuilder().uri("redis://host").sslOptions(ssl).build(),
        "sslOptions are set but the uri does not use TLS");
    RedisLockSettings s =
        RedisLockSettings.newBuilder().uri("rediss://host").sslOptions(ssl).build();
    assertThat(s.sslOptions()).contains(ssl);
  }

  @Test
  void cluster_mode_needs_a_plain_seed_uri_on_database_0() {
    RedisLockSettings s =
        RedisLockSettings.newBuilder().uri("redis://10.0.0.7:7000").cluster(true).build();
    assertThat(s.cluster()).isTrue();
    assertThat(s.endpoint()).isEqualTo("cluster seed redis://10.0.0.7:7000/0");
    assertRejected(
        () -> RedisLockSettings.newBuilder().uri("redis://h:7000/3").cluster(true).build(),
        "cluster mode needs a redis:// or rediss:// seed node uri with database 0");
    assertRejected(
        () ->
            RedisLockSettings.newBuilder()
                .uri("redis-sentinel://s1:26379/0#master")
                .cluster(true)
                .build(),
        "cluster mode needs");
  }

  @Test
  void to_builder_keeps_every_setting() {
    RedisLockSettings s =
        RedisLockSettings.newBuilder()
            .uri("redis://:pw@h:7000")
            .keyPrefix("p:")
            .hashTag("t")
            .commandTimeout(Duration.ofSeconds(3))
            .connectTimeout(Duration.ofSeconds(4))
            .clientName("n")
            .cluster(true)
            .clockOffset(() -> 42)
            .build();
    RedisLockSettings copy = s.toBuilder().build();
    assertThat(copy.toString()).isEqualTo(s.toString());
    assertThat(copy.clockOffset().getAsLong()).isEqualTo(42);
  }

  private static void assertRejected(ThrowableAssert.ThrowingCallable call, String... mentions) {
    assertThatThrownBy(call)
        .isInstanceOf(IllegalArgumentException.class)
        .satisfies(e -> assertThat(e.getMessage()).contains(mentions));
  }
}
