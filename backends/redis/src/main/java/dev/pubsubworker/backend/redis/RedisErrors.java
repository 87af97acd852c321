package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.LockBackendException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import java.time.Duration;
import java.util.List;

/**
 * The one place that turns a driver exception or a malformed reply into the port's {@link
 * LockBackendException}. Each message names the verb, the key prefix, the endpoint and what kind of
 * failure it was; never the key, and never the server's message text (only its error code), since
 * either could carry data. Immutable and thread-safe.
 */
final class RedisErrors {

  private final String namespace;
  private final String endpoint;
  private final Duration commandTimeout;

  RedisErrors(RedisLockSettings settings) {
    this.namespace = settings.namespace();
    this.endpoint = settings.endpoint();
    this.commandTimeout = settings.commandTimeout();
  }

  /** A store failure of {@code verb}, classified, with the driver's exception as its cause. */
  LockBackendException failure(String verb, RuntimeException e) {
    String what;
    if (e instanceof RedisCommandTimeoutException) {
      what = "no reply within the command timeout of " + commandTimeout;
    } else if (e instanceof RedisConnectionException) {
      what = "cannot connect (" + driverMessage(e) + ")";
    } else if (e instanceof RedisCommandExecutionException) {
      what = "the server refused the command (" + errorCode(e) + ")";
    } else {
      what = "the connection failed (" + driverMessage(e) + ")";
    }
    return new LockBackendException(where(verb) + what, e);
  }

  /**
   * A command that failed inside a batch script on one entry's key, as the single verb's script
   * failing the same way would have been reported.
   *
   * @param code the Redis error code the script caught (letters and underscores only)
   */
  LockBackendException refusedInScript(String verb, String code) {
    String safe = code != null && code.matches("[A-Z_]{1,32}") ? code : "ERR";
    return new LockBackendException(
        where(verb) + "the server refused the command (" + safe + " in script)");
  }

  /** A reply of {@code verb} that is not what the script returns: the key holds something else. */
  LockBackendException unexpected(String verb) {
    return new LockBackendException(
        where(verb)
            + "unexpected reply (the key holds something that is not a lock record, or another"
            + " client wrote it)");
  }

  private String where(String verb) {
    return place(verb) + ": ";
  }

  /** "{@code verb} failed on redis prefix 'p' at host:port", the start of every message. */
  String place(String verb) {
    return verb + " failed on redis prefix '" + namespace + "' at " + endpoint;
  }

  /** Whether {@code e} is a command failing because the key holds another type than a hash. */
  static boolean wrongType(LockBackendException e) {
    return e.getCause() instanceof RedisCommandExecutionException c
        && errorCode(c).startsWith("WRONGTYPE");
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
}
