package dev.pubsubworker.backend.redis;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link LockScript}s on the backend's connection: {@code EVALSHA} by the digest computed
 * locally, and, if the server lost its script cache (restart, failover, {@code SCRIPT FLUSH}), the
 * text once with {@code EVAL}, which caches it again. Every call passes the clock offset as the
 * first argument (ARGV[1], read by the prelude) and turns any driver failure into the port's
 * exception through {@link RedisErrors}. Batch scripts are {@linkplain #dispatch dispatched} first
 * and {@linkplain Pending#await awaited} after, so that on a cluster the calls for several slots
 * are in flight at once. Thread-safe.
 */
final class ScriptRunner {

  // Logs under the backend's name, the one category operators configure for this store.
  private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

  private final RedisConnection connection;
  private final RedisErrors errors;
  private final LongSupplier clockOffset;
  private final Duration commandTimeout;

  ScriptRunner(
      RedisConnection connection,
      RedisErrors errors,
      LongSupplier clockOffset,
      Duration commandTimeout) {
    this.connection = connection;
    this.errors = errors;
    this.clockOffset = clockOffset;
    this.commandTimeout = commandTimeout;
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
   * Runs a script that returns 1 (done), 0 (refused) or 2 (an unreadable record), on one key.
   *
   * @throws dev.pubsubworker.core.LockBackendException also if the reply is none of them
   */
  long status(String verb, LockScript script, byte[] key, byte[]... args) {
    Long reply = run(verb, script, ScriptOutputType.INTEGER, new byte[][] {key}, args);
    if (reply == null || reply < 0 || reply > 2) {
      throw errors.unexpected(verb);
    }
    return reply;
  }

  /**
   * {@link #status} without waiting: the stage completes on the client's I/O thread with the reply
   * (1, 0 or 2), or exceptionally with the {@link dev.pubsubworker.core.LockBackendException} that
   * {@code status} would throw. A server that lost the script gets its text once with {@code EVAL},
   * sent from the I/O thread without waiting there. The client's command timeout bounds it.
   */
  CompletionStage<Long> statusAsync(String verb, LockScript script, byte[] key, byte[]... args) {
    byte[][] argv = withOffset(args);
    byte[][] keys = {key};
    RedisClusterAsyncCommands<byte[], byte[]> async;
    CompletionStage<Long> sent;
    try {
      async = connection.async(verb);
      sent = async.evalsha(script.sha1(), ScriptOutputType.INTEGER, keys, argv);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(
          e instanceof dev.pubsubworker.core.LockBackendException ? e : errors.failure(verb, e));
    }
    return sent.exceptionallyCompose(
            failure -> {
              Throwable cause = unwrap(failure);
              if (cause instanceof RedisNoScriptException) {
                log.debug("{} script not cached on the server; sending it with EVAL", verb);
                return async.eval(script.source(), ScriptOutputType.INTEGER, keys, argv);
              }
              return CompletableFuture.failedFuture(cause);
            })
        .handle(
            (reply, failure) -> {
              if (failure != null) {
                Throwable cause = unwrap(failure);
                throw errors.failure(
                    verb,
                    cause instanceof RuntimeException e
                        ? e
                        : new RedisException("script call failed", cause));
              }
              if (reply == null || reply < 0 || reply > 2) {
                throw errors.unexpected(verb);
              }
              return reply;
            });
  }

  /** The failure inside a stage's wrapping ({@link CompletionException}). */
  static Throwable unwrap(Throwable failure) {
    Throwable t = failure;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Runs a script that returns a count, on keys that share one slot; a null reply counts 0. */
  long count(String verb, LockScript script, byte[][] keys, byte[]... args) {
    Long reply = run(verb, script, ScriptOutputType.INTEGER, keys, args);
    return reply == null ? 0 : reply;
  }

  /**
   * Sends a script that returns an array, on keys that share one slot, without waiting for it.
   *
   * @param verb names the call in errors
   * @param args the script's arguments after the clock offset
   * @throws dev.pubsubworker.core.LockBackendException if connecting fails
   */
  Pending dispatch(String verb, LockScript script, byte[][] keys, byte[][] args) {
    byte[][] argv = withOffset(args);
    RedisClusterAsyncCommands<byte[], byte[]> async = connection.async(verb);
    RedisFuture<List<Object>> future;
    try {
      future = async.evalsha(script.sha1(), ScriptOutputType.MULTI, keys, argv);
    } catch (RuntimeException e) {
      throw errors.failure(verb, e);
    }
    return new Pending(verb, script, keys, argv, future);
  }

  /** A dispatched script call, to be awaited once. */
  final class Pending {
    private final String verb;
    private final LockScript script;
    private final byte[][] keys;
    private final byte[][] argv;
    private final RedisFuture<List<Object>> future;

    private Pending(
        String verb,
        LockScript script,
        byte[][] keys,
        byte[][] argv,
        RedisFuture<List<Object>> future) {
      this.verb = verb;
      this.script = script;
      this.keys = keys;
      this.argv = argv;
      this.future = future;
    }

    /**
     * Waits for the reply, at most the command timeout; if the server had lost the script, sends
     * its text once with {@code EVAL} (on the same slot's node) and returns that reply.
     *
     * @throws dev.pubsubworker.core.LockBackendException if the call failed as a whole
     */
    ScriptReply await() {
      List<Object> values;
      try {
        try {
          values =
              LettuceFutures.awaitOrCancel(future, commandTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RedisNoScriptException e) {
          log.debug("{} script not cached on the server; sending it with EVAL", verb);
          values =
              connection.commands(verb).eval(script.source(), ScriptOutputType.MULTI, keys, argv);
        }
      } catch (RuntimeException e) {
        throw errors.failure(verb, e);
      }
      return new ScriptReply(values, verb, errors);
    }
  }

  private byte[][] withOffset(byte[][] args) {
    byte[][] argv = new byte[args.length + 1][];
    argv[0] = number(clockOffset.getAsLong());
    System.arraycopy(args, 0, argv, 1, args.length);
    return argv;
  }

  private <T> T run(
      String verb, LockScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
    byte[][] argv = withOffset(args);
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
