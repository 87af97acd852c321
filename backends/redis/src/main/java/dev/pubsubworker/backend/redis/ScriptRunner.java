package dev.pubsubworker.backend.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link LockScript}s on the backend's connection: {@code EVALSHA} by the digest computed
 * locally, and, if the server lost its script cache (restart, failover, {@code SCRIPT FLUSH}), the
 * text once with {@code EVAL}, which caches it again. Every call passes the clock offset as the
 * first argument (ARGV[1], read by the prelude) and turns any driver failure into the port's
 * exception through {@link RedisErrors}. Thread-safe.
 */
final class ScriptRunner {

  // Logs under the backend's name, the one category operators configure for this store.
  private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

  private final RedisConnection connection;
  private final RedisErrors errors;
  private final LongSupplier clockOffset;

  ScriptRunner(RedisConnection connection, RedisErrors errors, LongSupplier clockOffset) {
    this.connection = connection;
    this.errors = errors;
    this.clockOffset = clockOffset;
  }

  /**
   * Loads every script once on a new connection, so that verbs need only {@code EVALSHA}. A refused
   * {@code SCRIPT LOAD} (an ACL without it) is not an error: {@code EVAL} loads the script on first
   * use.
   */
  static void loadAll(RedisClusterCommands<byte[], byte[]> commands) {
    for (LockScript script : LockScript.values()) {
      try {
        String sha = commands.scriptLoad(script.source());
        if (!script.sha1().equalsIgnoreCase(sha)) {
          log.warn("Redis named script {} {} instead of {}", script, sha, script.sha1());
        }
      } catch (RedisCommandExecutionException e) {
        log.debug("SCRIPT LOAD of {} refused: {}", script, RedisErrors.errorCode(e));
      }
    }
  }

  /** Runs a script that returns an array, on one key. */
  ScriptReply list(String verb, LockScript script, byte[] key, byte[]... args) {
    List<Object> values = run(verb, script, ScriptOutputType.MULTI, new byte[][] {key}, args);
    return new ScriptReply(values, verb, errors);
  }

  /**
   * Runs a script that returns 1 (done) or 0 (refused), on one key.
   *
   * @throws dev.pubsubworker.core.LockBackendException also if the reply is neither
   */
  boolean flag(String verb, LockScript script, byte[] key, byte[]... args) {
    Long reply = run(verb, script, ScriptOutputType.INTEGER, new byte[][] {key}, args);
    if (reply == null || (reply != 0 && reply != 1)) {
      throw errors.unexpected(verb);
    }
    return reply == 1;
  }

  /** Runs a script that returns a count, on keys that share one slot; a null reply counts 0. */
  long count(String verb, LockScript script, byte[][] keys, byte[]... args) {
    Long reply = run(verb, script, ScriptOutputType.INTEGER, keys, args);
    return reply == null ? 0 : reply;
  }

  private <T> T run(
      String verb, LockScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
    byte[][] argv = new byte[args.length + 1][];
    argv[0] = number(clockOffset.getAsLong());
    System.arraycopy(args, 0, argv, 1, args.length);
    RedisClusterCommands<byte[], byte[]> commands = connection.commands(verb);
    try {
      try {
        return commands.evalsha(script.sha1(), type, keys, argv);
      } catch (RedisNoScriptException e) {
        log.debug("{} script not cached on the server; sending it with EVAL", verb);
        return commands.eval(script.source(), type, keys, argv);
      }
    } catch (RuntimeException e) {
      throw errors.failure(verb, e);
    }
  }

  /** A script argument: the decimal digits of {@code value}. */
  static byte[] number(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }
}
