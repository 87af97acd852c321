package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.NestedMultiOutput;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.protocol.RedisCommand;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim without a script, for the cases that need no script: one transaction, {@code MULTI},
 * {@code SET key value NX PX lease+ttl GET}, {@code PEXPIRETIME key}, {@code TIME}, {@code EXEC},
 * written as one batch to a connection only this class writes to (one round trip; Redis runs the
 * three commands atomically, with no other client's command between them).
 *
 * <ul>
 *   <li>No record at the key: the {@code SET} creates it, value and expiry in one command, exactly
 *       as the claim script would (fence 1, {@code expiresAt} = the key's expiry = Redis's clock +
 *       lease + ttl), and the claim is won; its {@code leaseExpiry} is that expiry − ttl.
 *   <li>A string record: the {@code SET} writes nothing and returns its value; with its expiry and
 *       the server's {@code TIME} read in the same transaction this answers {@code AlreadyDone}
 *       (DONE, now &lt; expiresAt) and {@code HeldByOther} (CLAIMED by another claim token, now
 *       &lt; leaseExpiry) — the two outcomes that write nothing — by the same rules as the script.
 *   <li>Anything else — the caller's own claim retried, a lapsed lease or window to reclaim, a hash
 *       an earlier version wrote ({@code WRONGTYPE}), a value this backend does not write — returns
 *       {@code null}: the transaction wrote nothing, and the caller runs the claim script, which
 *       decides every case.
 * </ul>
 *
 * Fencing is untouched: the only write here is the creation of an absent key with fence 1, which is
 * what the script writes for an absent key; every write over an existing record (and so every fence
 * change) stays in the script. The driver writes a batch command by command, so batches are written
 * one at a time, on a connection of their own ({@link RedisConnection#claimConnection}): no other
 * command lands between a {@code MULTI} and its {@code EXEC}. The commands use keywords of their
 * own so that the driver keeps no transaction state of its own for that connection. Standalone
 * servers only (a cluster connection routes {@code MULTI} and {@code EXEC} by no key). Thread-safe.
 */
final class FastClaim {

  private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

  private static final ProtocolKeyword MULTI = keyword("MULTI");
  private static final ProtocolKeyword SET = keyword("SET");
  private static final ProtocolKeyword PEXPIRETIME = keyword("PEXPIRETIME");
  private static final ProtocolKeyword TIME = keyword("TIME");
  private static final ProtocolKeyword EXEC = keyword("EXEC");
  private static final byte[] NX = "NX".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PX = "PX".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] GET = "GET".getBytes(StandardCharsets.US_ASCII);

  /** A string record's value, as the scripts write it ({@code prelude.lua}, {@code encode}). */
  private static final Pattern VALUE =
      Pattern.compile("(CLAIMED|DONE) ([1-9][0-9]{0,15}) (0|-?[1-9][0-9]{0,15}) ([!-~]{0,128})");

  private static final long MAX = 9007199254740991L;

  private final Duration commandTimeout;
  private volatile boolean refused;

  FastClaim(Duration commandTimeout) {
    this.commandTimeout = commandTimeout;
  }

  /**
   * Whether the transaction may be tried: not after the server refused one of its commands (an ACL
   * without {@code multi}, {@code exec}, {@code set}, {@code pexpiretime} or {@code time}).
   */
  boolean enabled() {
    return !refused;
  }

  /**
   * The claim's result when the transaction decides it, or {@code null} when the claim script must
   * (nothing was written then).
   *
   * @param value the record a fresh claim writes, in the scripts' string format
   * @param offset the test clock offset in milliseconds, &gt;= 0
   * @throws RuntimeException the driver's, if the transaction's reply did not arrive (connection
   *     lost, timeout): whether the key was created is unknown, as for a failed script call
   */
  ClaimResult claim(
      StatefulConnection<byte[], byte[]> connection,
      byte[] key,
      ClaimRequest request,
      byte[] value,
      long offset) {
    long ttl = request.ttl().toMillis();
    long px = request.lease().toMillis() + ttl + offset;
    AsyncCommand<byte[], byte[], List<Object>> exec =
        new AsyncCommand<>(new Command<>(EXEC, new NestedMultiOutput<>(ByteArrayCodec.INSTANCE)));
    List<RedisCommand<byte[], byte[], ?>> batch =
        List.of(
            status(MULTI, new CommandArgs<>(ByteArrayCodec.INSTANCE)),
            status(
                SET,
                new CommandArgs<>(ByteArrayCodec.INSTANCE)
                    .addKey(key)
                    .addValue(value)
                    .add(NX)
                    .add(PX)
                    .add(px)
                    .add(GET)),
            status(PEXPIRETIME, new CommandArgs<>(ByteArrayCodec.INSTANCE).addKey(key)),
            status(TIME, new CommandArgs<>(ByteArrayCodec.INSTANCE)),
            exec);
    // The driver writes a batch command by command: one batch at a time, so that no other
    // batch's commands land inside this one's MULTI ... EXEC (the connection is this class's only).
    synchronized (this) {
      connection.dispatch(batch);
    }
    List<Object> reply;
    try {
      reply = LettuceFutures.awaitOrCancel(exec, commandTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RedisCommandExecutionException e) {
      // The server answered: WRONGTYPE (a hash of an earlier version, or a key of another type)
      // or EXECABORT (a command refused when queued), and nothing was written; the script decides.
      // If the user may not run MULTI, the other commands ran on their own instead of being
      // queued: the SET NX can then only have created the record the script creates for this
      // claim token on an absent key, which the script recognises as this claim, retried.
      if (refusedByAcl(e, batch)) {
        refused = true;
        log.info(
            "the Redis user may not run MULTI, SET, PEXPIRETIME, TIME or EXEC; claims run the"
                + " claim script only");
      }
      return null;
    }
    if (reply == null
        || reply.size() != 3
        || !(reply.get(1) instanceof Long expiry)
        || !(reply.get(2) instanceof List<?> time)
        || time.size() != 2) {
      return null;
    }
    Object old = reply.get(0);
    if (old == null) {
      return new ClaimResult.Won(
          new Claim(request.key(), 1, Instant.ofEpochMilli(expiry - ttl), request.claimToken()));
    }
    if (!(old instanceof byte[] bytes) || expiry < 0 || expiry > MAX) {
      return null;
    }
    long now = serverMillis(time) + offset;
    return answer(bytes, expiry, now, request.claimToken());
  }

  /**
   * AlreadyDone or HeldByOther for a stored value when the rules give one of them, else null (the
   * script decides: a retried own claim, a reclaim, or a value that is not a record).
   */
  private static ClaimResult answer(byte[] stored, long expiresAt, long now, String token) {
    String text = new String(stored, StandardCharsets.UTF_8);
    int firstSpaces = 0;
    int end = -1;
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) == ' ' && ++firstSpaces == 4) {
        end = i;
        break;
      }
    }
    String head = end < 0 ? text : text.substring(0, end);
    Matcher m = VALUE.matcher(head);
    if (!m.matches()) {
      return null;
    }
    long retention = Long.parseLong(m.group(3));
    long fence = Long.parseLong(m.group(2));
    long leaseExpiry = expiresAt - retention;
    if (fence > MAX || Math.abs(retention) > MAX || leaseExpiry < 0 || leaseExpiry > MAX) {
      return null;
    }
    String storedToken = m.group(4);
    String fingerprint = end < 0 ? null : text.substring(end + 1);
    if (m.group(1).equals("DONE")) {
      return now < expiresAt ? new ClaimResult.AlreadyDone(fingerprint) : null;
    }
    if (!storedToken.equals(token) && now < leaseExpiry) {
      return new ClaimResult.HeldByOther(Instant.ofEpochMilli(leaseExpiry), fingerprint);
    }
    return null;
  }

  /** Whether the server refused one of the transaction's commands to this user (an ACL rule). */
  private static boolean refusedByAcl(
      RedisCommandExecutionException exec, List<RedisCommand<byte[], byte[], ?>> batch) {
    if (String.valueOf(exec.getMessage()).contains("NOPERM")) {
      return true;
    }
    for (RedisCommand<byte[], byte[], ?> command : batch) {
      if (command instanceof AsyncCommand<?, ?, ?> queued
          && queued.isCompletedExceptionally()
          && String.valueOf(queued.getError()).contains("NOPERM")) {
        return true;
      }
    }
    return false;
  }

  /** TIME's reply (seconds, microseconds) in milliseconds, as the scripts' now_ms computes it. */
  private static long serverMillis(List<?> time) {
    long seconds = Long.parseLong(new String((byte[]) time.get(0), StandardCharsets.US_ASCII));
    long micros = Long.parseLong(new String((byte[]) time.get(1), StandardCharsets.US_ASCII));
    return seconds * 1000 + micros / 1000;
  }

  private static AsyncCommand<byte[], byte[], String> status(
      ProtocolKeyword type, CommandArgs<byte[], byte[]> args) {
    return new AsyncCommand<>(
        new Command<>(type, new StatusOutput<>(ByteArrayCodec.INSTANCE), args));
  }

  /**
   * A command keyword sent as {@code name} but named differently to the driver, which recognises
   * {@code MULTI} and {@code EXEC} by name and would otherwise put the shared connection into its
   * own transaction state.
   */
  private static ProtocolKeyword keyword(String name) {
    byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
    String label = name + " (claim transaction)";
    return new ProtocolKeyword() {
      @Override
      public byte[] getBytes() {
        return bytes.clone();
      }

      @Override
      public String toString() {
        return label;
      }
    };
  }
}
