package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackendException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Authentication through the URI with a Redis 6 ACL user restricted to its prefix and to the
 * minimal command set documented in the module README; a wrong password and a missing permission
 * are {@link LockBackendException}s that say so.
 */
class RedisAuthTest {

  /** The ACL rules the README documents for the backend's user (plus the key pattern). */
  static final String[] MINIMAL_COMMANDS = {
    "+@connection",
    "+evalsha",
    "+eval",
    "+script|load",
    "+scan",
    "+del",
    "+time",
    "+get",
    "+set",
    "+pexpiretime",
    "+type",
    "+hmget",
    "+hget",
    "+hgetall"
  };

  private final List<String> users = new ArrayList<>();
  private final List<String> namespaces = new ArrayList<>();

  @AfterEach
  void dropUsers() {
    try (TestRedis.Side side = TestRedis.side()) {
      for (String user : users) {
        side.text().aclDeluser(user);
      }
      namespaces.forEach(side::deleteAll);
    }
  }

  private String createUser(String password, String keyPattern, String... commands) {
    String user = "pwtest-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> rules = new ArrayList<>();
    rules.add(user);
    rules.addAll(List.of("reset", "on", ">" + password, "~" + keyPattern, "-@all"));
    rules.addAll(List.of(commands));
    try (TestRedis.Side side = TestRedis.side()) {
      side.call("ACL", withSetuser(rules));
    }
    users.add(user);
    return user;
  }

  private static String[] withSetuser(List<String> rules) {
    List<String> args = new ArrayList<>();
    args.add("SETUSER");
    args.addAll(rules);
    return args.toArray(new String[0]);
  }

  private static String uriFor(String user, String password) {
    URI base = URI.create(TestRedis.uri());
    return "redis://" + user + ":" + password + "@" + base.getHost() + ":" + base.getPort();
  }

  @Test
  void an_acl_user_with_the_documented_minimal_rules_runs_every_verb() {
    String prefix = TestRedis.uniquePrefix("acl");
    namespaces.add(prefix);
    String password = "pw-" + UUID.randomUUID();
    String user = createUser(password, KeyLayout.globEscape(prefix) + "*", MINIMAL_COMMANDS);
    RedisLockSettings settings =
        RedisLockSettings.newBuilder().uri(uriFor(user, password)).keyPrefix(prefix).build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      backend.checkConnection();
      Claim c =
          ((ClaimResult.Won)
                  backend.claim(
                      new ClaimRequest(
                          "k", Duration.ofSeconds(30), Duration.ofMinutes(1), "t", "fp")))
              .claim();
      assertThat(backend.extend(c, Duration.ofSeconds(30))).isTrue();
      assertThat(backend.complete(c, Duration.ofMinutes(1))).isTrue();
      assertThat(backend.claim("k", Duration.ofSeconds(30), "u"))
          .isInstanceOf(ClaimResult.AlreadyDone.class);
      Claim m = ((ClaimResult.Won) backend.claim("m", Duration.ofSeconds(30), "t")).claim();
      backend.release(m);
      assertThat(backend.inspect("k")).isPresent();
      assertThat(backend.purgeExpired(10)).isZero();
      assertThat(backend.forget("k")).isTrue();
    }
  }

  @Test
  void a_wrong_password_is_a_lock_backend_exception_that_never_shows_the_password() {
    String user = createUser("right-password", "*", MINIMAL_COMMANDS);
    RedisLockSettings settings =
        RedisLockSettings.newBuilder()
            .uri(uriFor(user, "wrong-password"))
            .keyPrefix(TestRedis.uniquePrefix("wrongpass"))
            .build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      assertThatThrownBy(() -> backend.claim("k", Duration.ofSeconds(30), "t"))
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith("claim failed on redis prefix")
          .hasMessageContaining("cannot connect")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("wrong-password"));
    }
  }

  @Test
  void a_user_without_a_permission_gets_a_lock_backend_exception_naming_noperm() {
    String prefix = TestRedis.uniquePrefix("noperm");
    String password = "pw-" + UUID.randomUUID();
    // Everything but the right to write records (SET).
    String user =
        createUser(
            password,
            KeyLayout.globEscape(prefix) + "*",
            "+@connection",
            "+evalsha",
            "+eval",
            "+script|load",
            "+time",
            "+get",
            "+pexpiretime",
            "+hmget",
            "+hgetall",
            "+type");
    RedisLockSettings settings =
        RedisLockSettings.newBuilder().uri(uriFor(user, password)).keyPrefix(prefix).build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      assertThatThrownBy(() -> backend.claim("k", Duration.ofSeconds(30), "t"))
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith("claim failed on redis prefix '" + prefix + "'")
          .hasMessageContaining("the server refused the command (NOPERM");
      assertThat(backend.inspect("k")).isEmpty();
    }
  }
}
