package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.command.CommandListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LockBackend} and {@link LockAdmin} on Redis, through the Lettuce driver.
 *
 * <h2>Layout and atomicity</h2>
 *
 * One record is one Redis hash at {@code keyPrefix + key} (or {@code keyPrefix{hashTag}key}, see
 * {@link RedisLockSettings}) with the fields {@code state}, {@code fence}, {@code leaseExpiry},
 * {@code expiresAt} (epoch milliseconds), {@code claimToken} and {@code fingerprint}. Each verb is
 * one Lua script run with {@code EVALSHA}: one network round trip, atomic on the server, touching
 * exactly one key (so it is Redis Cluster safe; see {@link RedisLockSettings.Builder#cluster}).
 * Scripts are loaded once per connection; if the server lost them (restart, failover, {@code SCRIPT
 * FLUSH}) the verb resends the text once with {@code EVAL}.
 *
 * <h2>Time</h2>
 *
 * Expiry is judged inside each script against the server's {@code TIME}; no JVM clock is ever
 * consulted, so workers whose clocks disagree still agree on every lease. Each write sets the key's
 * Redis expiry ({@code PEXPIREAT}) to the record's {@code expiresAt}, so Redis removes records
 * itself once their suppression window (or a CLAIMED record's lease + ttl) has passed; {@link
 * #purgeExpired} exists for the admin contract and for records whose expiry was removed by hand.
 *
 * <h2>Keys and errors</h2>
 *
 * Keys are any well-formed string up to {@value #MAX_KEY_BYTES} UTF-8 bytes, stored byte for byte
 * (spaces, newlines, braces and control characters included); a bad key is an {@link
 * IllegalArgumentException} before any I/O. Any store failure — connection refused or lost, a
 * timeout, a read-only replica, a refused or failing script — is a {@link LockBackendException}
 * whose message names the verb, the key prefix and the endpoint (never the key) and whose cause is
 * the driver's exception. Commands are never replayed after a reconnect and are rejected at once
 * while disconnected: a failure is reported promptly, and the caller (the guard) decides to retry.
 *
 * <h2>Lifecycle</h2>
 *
 * Creating a backend does no I/O: the connection is opened by the first verb (or {@link
 * #checkConnection()}), re-attempted by a later verb if that failed, and re-established by the
 * driver in the background if it drops. One shared connection serves every thread (Lettuce
 * multiplexes and pipelines concurrent commands on it). Thread-safe; make one per process. {@link
 * #close()} closes the connection and the client, and the client resources unless they were
 * {@linkplain RedisLockSettings.Builder#clientResources passed in}.
 */
public final class RedisLockBackend implements LockBackend, LockAdmin {

  /** The longest key accepted, in UTF-8 bytes: 8 KiB. */
  public static final int MAX_KEY_BYTES = 8 * 1024;

  /** Keys examined per {@code SCAN} step (and so at most per purge script call). */
  static final int SCAN_COUNT = 1000;

  private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

  private static final byte[] ONE = {'1'};
  private static final byte[] ZERO = {'0'};
  private static final byte[] EMPTY = {};

  private final RedisLockSettings settings;
  private final KeyLayout layout;
  private final String namespace;
  private final String endpoint;
  private final AbstractRedisClient client;
  private final boolean cluster;
  private final Object connectLock = new Object();
  private volatile Link link;
  private volatile boolean closed;

  /** An open connection and its synchronous commands (standalone or cluster-aware). */
  private record Link(
      StatefulConnection<byte[], byte[]> connection, RedisClusterCommands<byte[], byte[]> sync) {}

  private RedisLockBackend(RedisLockSettings settings) {
    this.settings = settings;
    this.namespace = settings.namespace();
    this.layout = new KeyLayout(namespace);
    this.endpoint = settings.endpoint();
    RedisURI uri =
        RedisURI.builder(settings.redisUri())
            .withTimeout(settings.commandTimeout())
            .withClientName(settings.clientName())
            .build();
    this.cluster = settings.cluster();
    if (cluster) {
      RedisClusterClient clusterClient =
          settings
              .clientResources()
              .map(resources -> RedisClusterClient.create(resources, uri))
              .orElseGet(() -> RedisClusterClient.create(uri));
      ClusterClientOptions.Builder options = ClusterClientOptions.builder();
      configure(options, settings);
      options.topologyRefreshOptions(
          ClusterTopologyRefreshOptions.builder()
              // Adaptive refresh on MOVED/ASK/reconnects is the driver's default.
              .enablePeriodicRefresh(Duration.ofMinutes(1))
              .build());
      clusterClient.setOptions(options.build());
      this.client = clusterClient;
    } else {
      RedisClient redisClient =
          settings
              .clientResources()
              .map(resources -> RedisClient.create(resources, uri))
              .orElseGet(() -> RedisClient.create(uri));
      ClientOptions.Builder options = ClientOptions.builder();
      configure(options, settings);
      redisClient.setOptions(options.build());
      this.client = redisClient;
    }
  }

  /** The driver options both client kinds share. */
  private static void configure(ClientOptions.Builder options, RedisLockSettings settings) {
    options
        .autoReconnect(true)
        // Fail fast while the connection is down instead of queueing until the timeout.
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        // A command in flight when the connection dropped fails instead of being re-sent after
        // the reconnect: its caller has been told it failed and may already be retrying.
        .replayFilter(command -> true)
        .socketOptions(
            SocketOptions.builder()
                .connectTimeout(settings.connectTimeout())
                .keepAlive(true)
                .build())
        .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()));
    settings.sslOptions().ifPresent(options::sslOptions);
  }

  /**
   * A backend with the given settings. Does no I/O: the first verb connects.
   *
   * @throws NullPointerException if settings is null
   */
  public static RedisLockBackend create(RedisLockSettings settings) {
    return new RedisLockBackend(Objects.requireNonNull(settings, "settings"));
  }

  /** The settings this backend was created with. */
  public RedisLockSettings settings() {
    return settings;
  }

  /**
   * Connects if not connected yet and round-trips a {@code PING}: a readiness check.
   *
   * @throws LockBackendException if Redis cannot be reached, refuses the credentials, or does not
   *     answer within the command timeout
   * @throws IllegalStateException if the backend is closed
   */
  public void checkConnection() {
    RedisClusterCommands<byte[], byte[]> commands = commands("checkConnection");
    try {
      commands.ping();
    } catch (RuntimeException e) {
      throw failure("checkConnection", e);
    }
  }

  /** Lets a test in this package watch the commands the client sends; call before connecting. */
  void addCommandListener(CommandListener listener) {
    client.addListener(listener);
  }

  @Override
  public int maxKeyBytes() {
    return MAX_KEY_BYTES;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public ClaimResult claim(ClaimRequest request) {
    validateKey(request.key());
    String fingerprint = request.fingerprint();
    List<Object> reply =
        run(
            "claim",
            LockScript.CLAIM,
            ScriptOutputType.MULTI,
            layout.redisKey(request.key()),
            number(request.lease().toMillis()),
            number(request.ttl().toMillis()),
            request.claimToken().getBytes(StandardCharsets.US_ASCII),
            fingerprint == null ? EMPTY : fingerprint.getBytes(StandardCharsets.UTF_8),
            fingerprint == null ? ZERO : ONE);
    long code = longAt(reply, 0, "claim");
    if (code == 1) {
      return new ClaimResult.Won(
          new Claim(
              request.key(),
              longAt(reply, 1, "claim"),
              Instant.ofEpochMilli(longAt(reply, 2, "claim")),
              request.claimToken()));
    }
    if (code == 2) {
      return new ClaimResult.HeldByOther(
          Instant.ofEpochMilli(longAt(reply, 1, "claim")), stringAt(reply, 2, "claim"));
    }
    if (code == 3) {
      return new ClaimResult.AlreadyDone(stringAt(reply, 2, "claim"));
    }
    throw unexpected("claim");
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public boolean complete(Claim claim, Duration ttl) {
    validateKey(claim.key());
    Objects.requireNonNull(ttl, "ttl");
    if (ttl.toMillis() < 1) {
      throw new IllegalArgumentException("ttl must be >= 1ms, but was " + ttl);
    }
    Long done =
        run(
            "complete",
            LockScript.COMPLETE,
            ScriptOutputType.INTEGER,
            layout.redisKey(claim.key()),
            number(claim.fence()),
            number(ttl.toMillis()));
    return isOne(done, "complete");
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public void release(Claim claim) {
    validateKey(claim.key());
    Long released =
        run(
            "release",
            LockScript.RELEASE,
            ScriptOutputType.INTEGER,
            layout.redisKey(claim.key()),
            number(claim.fence()));
    isOne(released, "release");
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public boolean extend(Claim claim, Duration lease) {
    validateKey(claim.key());
    Objects.requireNonNull(lease, "lease");
    if (lease.toMillis() < 1) {
      throw new IllegalArgumentException("lease must be >= 1ms, but was " + lease);
    }
    Long extended =
        run(
            "extend",
            LockScript.EXTEND,
            ScriptOutputType.INTEGER,
            layout.redisKey(claim.key()),
            number(claim.fence()),
            number(lease.toMillis()));
    return isOne(extended, "extend");
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}; {@code observedAt} is the server's {@code TIME} in the same script.
   *
   * @throws LockBackendException if the store failed, or the key holds something that is not one of
   *     this backend's records
   */
  @Override
  public Optional<LockRecord> inspect(String key) {
    validateKey(key);
    List<Object> reply =
        run("inspect", LockScript.INSPECT, ScriptOutputType.MULTI, layout.redisKey(key));
    String state = stringAt(reply, 1, "inspect");
    if (state == null) {
      return Optional.empty();
    }
    LockState parsed =
        switch (state) {
          case "CLAIMED" -> LockState.CLAIMED;
          case "DONE" -> LockState.DONE;
          default -> throw unexpected("inspect");
        };
    try {
      return Optional.of(
          new LockRecord(
              key,
              parsed,
              Long.parseLong(stringAt(reply, 2, "inspect")),
              Instant.ofEpochMilli(Long.parseLong(stringAt(reply, 3, "inspect"))),
              Instant.ofEpochMilli(Long.parseLong(stringAt(reply, 4, "inspect"))),
              stringAt(reply, 5, "inspect"),
              stringAt(reply, 6, "inspect"),
              Instant.ofEpochMilli(longAt(reply, 0, "inspect"))));
    } catch (NumberFormatException | NullPointerException e) {
      throw unexpected("inspect");
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code DEL}.
   */
  @Override
  public boolean forget(String key) {
    validateKey(key);
    RedisClusterCommands<byte[], byte[]> commands = commands("forget");
    Long deleted;
    try {
      deleted = commands.del(layout.redisKey(key));
    } catch (RuntimeException e) {
      throw failure("forget", e);
    }
    return deleted != null && deleted > 0;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Walks this prefix with {@code SCAN MATCH prefix* COUNT 1000} and, for each page that has
   * records, runs one purge script that deletes those whose {@code expiresAt} has passed on the
   * server's clock. Redis normally removes expired records on its own, so this mostly finds
   * nothing; it costs one {@code SCAN} per 1,000 keys of the database (the whole keyspace is
   * walked, matching is done server-side), so run it off-peak on a large shared database.
   */
  @Override
  public int purgeExpired(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1, but was " + limit);
    }
    RedisClusterCommands<byte[], byte[]> commands = commands("purgeExpired");
    ScanArgs args = ScanArgs.Builder.matches(layout.scanPattern()).limit(SCAN_COUNT);
    ScanCursor cursor = ScanCursor.INITIAL;
    int removed = 0;
    do {
      KeyScanCursor<byte[]> page;
      try {
        page = commands.scan(cursor, args);
      } catch (RuntimeException e) {
        throw failure("purgeExpired", e);
      }
      List<byte[]> candidates = new ArrayList<>(page.getKeys().size());
      for (byte[] k : page.getKeys()) {
        if (layout.owns(k)) {
          candidates.add(k);
        }
      }
      // One script call per page; on a cluster one per slot, since a script's keys must share one.
      Collection<List<byte[]>> batches =
          cluster
              ? SlotHash.partition(ByteArrayCodec.INSTANCE, candidates).values()
              : candidates.isEmpty() ? List.of() : List.of(candidates);
      for (List<byte[]> batch : batches) {
        if (removed >= limit) {
          break;
        }
        Long deleted =
            runOnKeys(
                "purgeExpired",
                LockScript.PURGE,
                ScriptOutputType.INTEGER,
                batch.toArray(new byte[0][]),
                number(limit - removed));
        removed += Math.toIntExact(deleted == null ? 0 : deleted);
      }
      cursor = page;
    } while (!cursor.isFinished() && removed < limit);
    return removed;
  }

  /**
   * Closes the connection and the client, and the client resources unless they were passed in.
   * Records are untouched. Idempotent; verbs after close throw {@link IllegalStateException}.
   */
  @Override
  public void close() {
    synchronized (connectLock) {
      if (closed) {
        return;
      }
      closed = true;
      Link l = link;
      link = null;
      try {
        if (l != null) {
          l.connection().close();
        }
      } finally {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
      }
    }
  }

  @Override
  public String toString() {
    return "RedisLockBackend{" + endpoint + ", prefix '" + namespace + "'}";
  }

  // -----------------------------------------------------------------------------------------------

  private RedisClusterCommands<byte[], byte[]> commands(String verb) {
    Link l = link;
    if (l == null) {
      l = connect(verb);
    }
    return l.sync();
  }

  private Link connect(String verb) {
    synchronized (connectLock) {
      if (closed) {
        throw new IllegalStateException("the Redis lock backend is closed");
      }
      if (link != null) {
        return link;
      }
      Link l;
      try {
        if (client instanceof RedisClusterClient clusterClient) {
          StatefulRedisClusterConnection<byte[], byte[]> c =
              clusterClient.connect(ByteArrayCodec.INSTANCE);
          l = new Link(c, c.sync());
        } else {
          StatefulRedisConnection<byte[], byte[]> c =
              ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
          l = new Link(c, c.sync());
        }
      } catch (RuntimeException e) {
        throw failure(verb, e);
      }
      try {
        loadScripts(l.sync());
      } catch (RuntimeException e) {
        l.connection().close();
        throw failure(verb, e);
      }
      log.info("connected to {} for lock records under prefix '{}'", endpoint, namespace);
      link = l;
      return l;
    }
  }

  /** Loads every script once, so that verbs need only {@code EVALSHA}. */
  private void loadScripts(RedisClusterCommands<byte[], byte[]> commands) {
    for (LockScript script : LockScript.values()) {
      try {
        String sha = commands.scriptLoad(script.source());
        if (!script.sha1().equalsIgnoreCase(sha)) {
          log.warn("Redis named script {} {} instead of {}", script, sha, script.sha1());
        }
      } catch (RedisCommandExecutionException e) {
        // SCRIPT LOAD may be denied (an ACL without it); EVAL's fallback loads it on first use.
        log.debug("SCRIPT LOAD of {} refused: {}", script, errorCode(e));
      }
    }
  }

  private <T> T run(
      String verb, LockScript script, ScriptOutputType type, byte[] key, byte[]... args) {
    return runOnKeys(verb, script, type, new byte[][] {key}, args);
  }

  private <T> T runOnKeys(
      String verb, LockScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
    byte[][] argv = new byte[args.length + 1][];
    argv[0] = number(settings.clockOffset().getAsLong());
    System.arraycopy(args, 0, argv, 1, args.length);
    RedisClusterCommands<byte[], byte[]> commands = commands(verb);
    try {
      try {
        return commands.evalsha(script.sha1(), type, keys, argv);
      } catch (RedisNoScriptException e) {
        // The server lost its script cache (restart, failover, SCRIPT FLUSH): send the text once;
        // EVAL caches it again, so the next call is back to EVALSHA.
        log.debug("{} script not cached on {}; sending it with EVAL", verb, endpoint);
        return commands.eval(script.source(), type, keys, argv);
      }
    } catch (RuntimeException e) {
      throw failure(verb, e);
    }
  }

  /**
   * The one place that turns a driver exception into the port's {@link LockBackendException}: the
   * message names the verb, the prefix, the endpoint and what kind of failure it was; never the
   * key, and never the server's message text (only its error code).
   */
  private LockBackendException failure(String verb, RuntimeException e) {
    String what;
    if (e instanceof RedisCommandTimeoutException) {
      what = "no reply within the command timeout of " + settings.commandTimeout();
    } else if (e instanceof RedisConnectionException) {
      what = "cannot connect (" + driverMessage(e) + ")";
    } else if (e instanceof RedisCommandExecutionException) {
      what = "the server refused the command (" + errorCode(e) + ")";
    } else {
      what = "the connection failed (" + driverMessage(e) + ")";
    }
    return new LockBackendException(
        verb + " failed on redis prefix '" + namespace + "' at " + endpoint + ": " + what, e);
  }

  private LockBackendException unexpected(String verb) {
    return new LockBackendException(
        verb
            + " failed on redis prefix '"
            + namespace
            + "' at "
            + endpoint
            + ": unexpected reply (the key holds something that is not a lock record, or another"
            + " client wrote it)");
  }

  /**
   * The driver's own text for a connection-level failure ("Connection closed", "Unable to connect
   * to host:port"): it names endpoints, never command arguments. Server replies, which could, go
   * through {@link #errorCode} instead.
   */
  private static String driverMessage(RuntimeException e) {
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      return e.getClass().getSimpleName();
    }
    String oneLine = message.strip().replaceAll("\\s+", " ");
    return oneLine.length() <= 160 ? oneLine : oneLine.substring(0, 160) + "...";
  }

  /**
   * The Redis error code: the first word of the error (READONLY, NOPERM, OOM, ...), or, for an
   * error raised inside a script ({@code ERR ... script: <sha>, on @user_script:12}), the code of
   * the command that failed in it. Never the rest of the message.
   */
  static String errorCode(RuntimeException e) {
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      return e.getClass().getSimpleName();
    }
    String first = message.strip().split("\\s+", 2)[0];
    boolean inScript = message.contains("@user_script");
    if (first.equals("ERR") && inScript) {
      for (String code : List.of("WRONGTYPE", "NOPERM", "READONLY", "OOM", "MISCONF")) {
        if (message.contains(code)) {
          return code + " in script";
        }
      }
      if (message.contains("can't run this command")) {
        return "NOPERM in script";
      }
      return "ERR in script";
    }
    boolean isCode =
        first.length() <= 32 && first.chars().allMatch(c -> c >= 'A' && c <= 'Z' || c == '_');
    return (isCode ? first : e.getClass().getSimpleName()) + (inScript ? " in script" : "");
  }

  private static byte[] number(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }

  private boolean isOne(Long reply, String verb) {
    if (reply == null || (reply != 0 && reply != 1)) {
      throw unexpected(verb);
    }
    return reply == 1;
  }

  private long longAt(List<Object> reply, int index, String verb) {
    if (reply == null || reply.size() <= index || !(reply.get(index) instanceof Long value)) {
      throw unexpected(verb);
    }
    return value;
  }

  private String stringAt(List<Object> reply, int index, String verb) {
    if (reply == null || reply.size() <= index) {
      throw unexpected(verb);
    }
    Object value = reply.get(index);
    if (value == null) {
      return null;
    }
    if (!(value instanceof byte[] bytes)) {
      throw unexpected(verb);
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
