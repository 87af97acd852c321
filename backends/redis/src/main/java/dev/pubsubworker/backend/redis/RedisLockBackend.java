package dev.pubsubworker.backend.redis;

import static dev.pubsubworker.backend.redis.ScriptRunner.number;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.DurationChecks;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.command.CommandListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link LockBackend}, {@link BatchLockBackend} and {@link LockAdmin} on Redis, through the
 * Lettuce driver.
 *
 * <h2>Layout and atomicity</h2>
 *
 * One record is one Redis string at {@code keyPrefix + key} (or {@code keyPrefix{hashTag}key}, see
 * {@link RedisLockSettings}): the value {@code state fence retention claimToken [fingerprint]}
 * (space-separated, the fingerprint the rest), and the key's own Redis expiry, which is the
 * record's {@code expiresAt} (epoch milliseconds); {@code leaseExpiry = expiresAt - retention}.
 * Records of earlier versions, one hash with the fields {@code state}, {@code fence}, {@code
 * leaseExpiry}, {@code expiresAt}, {@code claimToken} and {@code fingerprint}, are read as well and
 * turned into a string by their next write (a rolling upgrade needs no migration). Each verb is one
 * Lua script run with {@code EVALSHA}: one network round trip, atomic on the server, touching
 * exactly one key (so it is Redis Cluster safe; see {@link RedisLockSettings.Builder#cluster}). The
 * claim script's common case, a key without a record, is two commands inside it ({@code TIME} and
 * one {@code SET NX PXAT GET} that creates the record); a duplicate adds one {@code PEXPIRETIME}.
 * Scripts are loaded once per connection; if the server lost them (restart, failover, {@code SCRIPT
 * FLUSH}) the verb resends the text once with {@code EVAL}.
 *
 * <h2>Batches</h2>
 *
 * {@link #claimAll} and {@link #completeAll} send up to {@value #MAX_BATCH_SIZE} entries as one
 * script call ({@code EVALSHA} with one key per entry): the script reads the server's {@code TIME}
 * once and applies each entry with exactly its single verb's code, in list order, atomically as a
 * whole. A command that fails on one entry's key (a {@code WRONGTYPE}, say) fails that entry only,
 * having written nothing to it; a call that fails as a whole (connection lost, timeout) throws
 * {@link LockBackendException}. On a cluster (without a hash tag) the entries are grouped by slot,
 * one script call per slot, all sent before any is awaited, and the results reassembled in request
 * order; a slot's call that fails as a whole fails that slot's entries, and the method throws only
 * if every slot's call failed.
 *
 * <h2>Time</h2>
 *
 * Expiry is judged inside each script against the server's {@code TIME}; no JVM clock is ever
 * consulted, so workers whose clocks disagree still agree on every lease. The key's Redis expiry is
 * the record's {@code expiresAt}, set with the value in the same {@code SET}: Redis removes a
 * record itself right after its suppression window (or a CLAIMED record's lease + ttl) has passed,
 * never before; {@link #purgeExpired} exists for the admin contract and for hashes of earlier
 * versions, whose Redis expiry could be later than their {@code expiresAt}.
 *
 * <h2>Keys and errors</h2>
 *
 * Keys are any well-formed string up to {@value #MAX_KEY_BYTES} UTF-8 bytes, stored byte for byte
 * (spaces, newlines, braces and control characters included); a bad key is an {@link
 * IllegalArgumentException} before any I/O. Records are read strictly ({@link LockBackend},
 * "Reading strictly"): each script checks what it reads and leaves a string or hash it cannot read
 * untouched, and the verb throws {@link InvalidLockRecordException} for that key (after one more
 * round trip that reads the key back to say what is wrong); so does a key of the namespace that
 * holds another type ({@code WRONGTYPE}), in a batch for that entry only. Any store failure —
 * connection refused or lost, a timeout, a read-only replica, a refused or failing script — is a
 * {@link LockBackendException} whose message names the verb, the key prefix and the endpoint (never
 * the key) and whose cause is the driver's exception. Commands are never replayed after a reconnect
 * and are rejected at once while disconnected: a failure is reported promptly, and the caller (the
 * guard) decides to retry.
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
public final class RedisLockBackend implements BatchLockBackend, LockAdmin {

  /** The longest key accepted, in UTF-8 bytes: 8 KiB. */
  public static final int MAX_KEY_BYTES = 8 * 1024;

  /**
   * The most entries in one {@link #claimAll} or {@link #completeAll}: 64. A batch script holds the
   * server for all its entries (a few microseconds each), so larger batches would add latency to
   * every other client's commands for little more saving.
   */
  public static final int MAX_BATCH_SIZE = 64;

  /** Arguments per entry of the claim batch script: lease, ttl, token, fingerprint, has it. */
  private static final int CLAIM_ARGS = 5;

  /** Arguments per entry of the complete batch script: fence, ttl. */
  private static final int COMPLETE_ARGS = 2;

  /** Keys examined per {@code SCAN} step (and so at most per purge script call). */
  static final int SCAN_COUNT = 1000;

  /** The claim script's reply code for an unreadable record ({@code claim_entry.lua}). */
  private static final long UNREADABLE_CLAIM = 4;

  /** The complete, release and extend scripts' reply for an unreadable record. */
  private static final long UNREADABLE_STATUS = 2;

  /** The fields of a record's hash, as the scripts read them. */
  private static final List<String> RECORD_FIELDS =
      List.of("state", "fence", "leaseExpiry", "expiresAt", "claimToken", "fingerprint");

  /** The stored-field name under which an unreadable key's Redis type is reported. */
  private static final String TYPE_FIELD = "(type)";

  private static final byte[] ONE = {'1'};
  private static final byte[] ZERO = {'0'};
  private static final byte[] EMPTY = {};

  private final RedisLockSettings settings;
  private final KeyLayout layout;
  private final RedisErrors errors;
  private final RedisConnection connection;
  private final ScriptRunner scripts;

  private RedisLockBackend(RedisLockSettings settings) {
    this.settings = settings;
    this.layout = new KeyLayout(settings.namespace());
    this.errors = new RedisErrors(settings);
    this.connection = new RedisConnection(settings, errors, ScriptRunner::loadAll);
    this.scripts =
        new ScriptRunner(connection, errors, settings.clockOffset(), settings.commandTimeout());
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
    RedisClusterCommands<byte[], byte[]> commands = connection.commands("checkConnection");
    try {
      commands.ping();
    } catch (RuntimeException e) {
      throw errors.failure("checkConnection", e);
    }
  }

  /** Lets a test in this package watch the commands the client sends; call before connecting. */
  void addCommandListener(CommandListener listener) {
    connection.addCommandListener(listener);
  }

  @Override
  public int maxKeyBytes() {
    return MAX_KEY_BYTES;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA} of the claim script.
   */
  @Override
  public ClaimResult claim(ClaimRequest request) {
    validateKey(request.key());
    byte[][] args = new byte[CLAIM_ARGS][];
    claimArgs(request, args, 0);
    ScriptReply reply =
        onRecord(
            "claim",
            request.key(),
            () -> scripts.list("claim", LockScript.CLAIM, layout.redisKey(request.key()), args));
    return claimResult(request, reply);
  }

  /** Writes a claim's script arguments into {@code args} from {@code at}. */
  private static void claimArgs(ClaimRequest request, byte[][] args, int at) {
    String fingerprint = request.fingerprint();
    args[at] = number(request.lease().toMillis());
    args[at + 1] = number(request.ttl().toMillis());
    args[at + 2] = request.claimToken().getBytes(StandardCharsets.US_ASCII);
    args[at + 3] = fingerprint == null ? EMPTY : fingerprint.getBytes(StandardCharsets.UTF_8);
    args[at + 4] = fingerprint == null ? ZERO : ONE;
  }

  /**
   * The result a claim script's reply ({@code claim_entry.lua}) stands for.
   *
   * @throws InvalidLockRecordException for the reply of an unreadable record
   */
  private ClaimResult claimResult(ClaimRequest request, ScriptReply reply) {
    long code = reply.longAt(0);
    if (code == 1) {
      return new ClaimResult.Won(
          new Claim(
              request.key(),
              reply.longAt(1),
              Instant.ofEpochMilli(reply.longAt(2)),
              request.claimToken()));
    }
    if (code == 2) {
      return new ClaimResult.HeldByOther(Instant.ofEpochMilli(reply.longAt(1)), reply.stringAt(2));
    }
    if (code == 3) {
      return new ClaimResult.AlreadyDone(reply.stringAt(2));
    }
    if (code == UNREADABLE_CLAIM) {
      throw unreadable("claim", request.key());
    }
    throw reply.unexpected();
  }

  /**
   * Runs one verb's script on {@code key}'s record; a key that holds another type than a string or
   * a hash (WRONGTYPE) is an unreadable record, not a store failure.
   */
  private <T> T onRecord(String verb, String key, Supplier<T> call) {
    try {
      return call.get();
    } catch (LockBackendException e) {
      if (!RedisErrors.wrongType(e)) {
        throw e;
      }
      InvalidLockRecordException unreadable = unreadable(verb, key);
      unreadable.addSuppressed(e);
      throw unreadable;
    }
  }

  /** What a single verb's status reply (1, 0, or 2 for an unreadable record) stands for. */
  private boolean answer(String verb, String key, long status) {
    if (status == UNREADABLE_STATUS) {
      throw unreadable(verb, key);
    }
    return status == 1;
  }

  /**
   * The error for a key whose record a verb's script found unreadable (and left alone): the record
   * read back as stored, so the error can say what is wrong and carry it. One more round trip, on
   * this rare path only.
   */
  private InvalidLockRecordException unreadable(String verb, String key) {
    String where = errors.place(verb);
    Stored stored;
    try {
      stored = readStored(key);
    } catch (LockBackendException e) {
      InvalidLockRecordException unreadable =
          new InvalidLockRecordException(
              where, key, "a record this backend did not write; reading it back failed", Map.of());
      unreadable.addSuppressed(e);
      return unreadable;
    }
    if (stored.type().equals("hash") || stored.type().equals("string")) {
      try {
        parse(where, key, stored);
      } catch (InvalidLockRecordException e) {
        return e;
      }
    } else if (!stored.type().equals("none")) {
      return notARecord(where, key, stored.type());
    }
    return new InvalidLockRecordException(
        where, key, "unreadable when " + verb + " read it, and changed since", stored.fields());
  }

  /** A key of this namespace that holds a list, set, ... where a record (a string) belongs. */
  private static InvalidLockRecordException notARecord(String where, String key, String type) {
    return new InvalidLockRecordException(
        where,
        key,
        "the Redis key holds a " + type + ", not a lock record",
        Map.of(TYPE_FIELD, type));
  }

  /**
   * A string or hash as the inspect script read it, parsed strictly. A string the script could not
   * read as a record comes back as its {@code value} and {@code expiry} only.
   *
   * @throws InvalidLockRecordException if it is not a readable record
   */
  private static LockRecord parse(String where, String key, Stored stored) {
    if (stored.type().equals("string") && !stored.fields().containsKey("state")) {
      throw new InvalidLockRecordException(
          where,
          key,
          "the Redis key holds a string that is not a lock record (value and expiry as shown)",
          stored.fields());
    }
    return LockRecord.parse(key, stored.fields(), stored.observedAt(), where);
  }

  /**
   * A key as the inspect script read it: its Redis type and its fields (a hash's as stored, a
   * string record's as the fields it stands for, or a string's value and expiry).
   */
  private record Stored(String type, Map<String, String> fields, Instant observedAt) {}

  private Stored readStored(String key) {
    ScriptReply reply = scripts.list("inspect", LockScript.INSPECT, layout.redisKey(key));
    Instant observedAt = Instant.ofEpochMilli(reply.longAt(0));
    String type = reply.stringAt(1);
    ScriptReply flat = reply.listAt(2);
    if (type == null || flat.size() % 2 != 0) {
      throw reply.unexpected();
    }
    Map<String, String> fields = new LinkedHashMap<>();
    for (int i = 0; i < flat.size(); i += 2) {
      fields.put(flat.stringAt(i), flat.stringAt(i + 1));
    }
    return new Stored(type, fields, observedAt);
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public boolean complete(Claim claim, Duration ttl) {
    validateKey(claim.key());
    DurationChecks.requireAtLeastOneMilli("ttl", ttl);
    long status =
        onRecord(
            "complete",
            claim.key(),
            () ->
                scripts.status(
                    "complete",
                    LockScript.COMPLETE,
                    layout.redisKey(claim.key()),
                    number(claim.fence()),
                    number(ttl.toMillis())));
    return answer("complete", claim.key(), status);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The same {@code EVALSHA} as {@link #complete}, on the shared connection's asynchronous
   * commands: the stage completes on Lettuce's event loop when the reply comes, or when the command
   * timeout passes. Only for an unreadable record does it read the record back for the error, which
   * it does off the event loop.
   */
  @Override
  public CompletionStage<Boolean> completeAsync(Claim claim, Duration ttl) {
    CompletionStage<Long> status;
    try {
      validateKey(claim.key());
      DurationChecks.requireAtLeastOneMilli("ttl", ttl);
      status =
          scripts.statusAsync(
              "complete",
              LockScript.COMPLETE,
              layout.redisKey(claim.key()),
              number(claim.fence()),
              number(ttl.toMillis()));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    status.whenComplete(
        (reply, failure) -> {
          Throwable cause = failure == null ? null : ScriptRunner.unwrap(failure);
          boolean wrongType = cause instanceof LockBackendException e && RedisErrors.wrongType(e);
          if (cause == null && reply != UNREADABLE_STATUS) {
            result.complete(reply == 1);
          } else if (cause != null && !wrongType) {
            result.completeExceptionally(cause);
          } else {
            // Reading the record back blocks: not on the event loop that would answer it.
            ForkJoinPool.commonPool()
                .execute(
                    () -> {
                      InvalidLockRecordException unreadable = unreadable("complete", claim.key());
                      if (cause != null) {
                        unreadable.addSuppressed(cause);
                      }
                      result.completeExceptionally(unreadable);
                    });
          }
        });
    return result;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public void release(Claim claim) {
    validateKey(claim.key());
    long status =
        onRecord(
            "release",
            claim.key(),
            () ->
                scripts.status(
                    "release",
                    LockScript.RELEASE,
                    layout.redisKey(claim.key()),
                    number(claim.fence())));
    answer("release", claim.key(), status);
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA}.
   */
  @Override
  public boolean extend(Claim claim, Duration lease) {
    validateKey(claim.key());
    DurationChecks.requireAtLeastOneMilli("lease", lease);
    long status =
        onRecord(
            "extend",
            claim.key(),
            () ->
                scripts.status(
                    "extend",
                    LockScript.EXTEND,
                    layout.redisKey(claim.key()),
                    number(claim.fence()),
                    number(lease.toMillis())));
    return answer("extend", claim.key(), status);
  }

  /** {@value #MAX_BATCH_SIZE}. */
  @Override
  public int maxBatchSize() {
    return MAX_BATCH_SIZE;
  }

  /**
   * 64: every call goes over one multiplexed connection that pipelines them, so overlapping calls
   * are served side by side, and a caller queued behind a round trip in flight would only wait;
   * while a batch saves Redis next to nothing (one script call runs the same commands per key as
   * the single verbs: 73 against 63 µs of server time per lock cycle, measured with {@code INFO
   * commandstats}). With 4 in flight, the batched guard reached 0.79 of the unbatched one at 8
   * threads on loopback and 0.86 across a network (peer benchmark); with the limit adapting from 4,
   * 0.42 and 0.93 on a loaded machine, where every hand-off to a woken thread waits for a core. So
   * callers batch only beyond 64 calls of a verb in flight, where they pile up.
   */
  @Override
  public int maxConcurrentBatches() {
    return 64;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA} of the batch claim script (on a cluster one per slot, in parallel). An
   * entry with a bad key fails with {@link IllegalArgumentException} and is not sent.
   */
  @Override
  public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
    return batch(
        "claimAll",
        "claim",
        LockScript.CLAIM_ALL,
        requests,
        ClaimRequest::key,
        CLAIM_ARGS,
        (request, args, at) -> claimArgs(request, args, at),
        (request, reply, i) -> {
          ScriptReply entry = reply.listAt(i);
          return entry.longAt(0) == -1
              ? BatchResult.failed(refusedInScript("claim", request.key(), entry.stringAt(1)))
              : BatchResult.of(claimResult(request, entry));
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA} of the batch complete script (on a cluster one per slot, in parallel).
   * An entry with a bad key fails with {@link IllegalArgumentException} and is not sent.
   */
  @Override
  public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
    return batch(
        "completeAll",
        "complete",
        LockScript.COMPLETE_ALL,
        requests,
        request -> request.claim().key(),
        COMPLETE_ARGS,
        (request, args, at) -> {
          args[at] = number(request.claim().fence());
          args[at + 1] = number(request.ttl().toMillis());
        },
        (request, reply, i) -> {
          Object entry = reply.at(i);
          if (entry instanceof Long status && status >= 0 && status <= UNREADABLE_STATUS) {
            return BatchResult.of(answer("complete", request.claim().key(), status));
          }
          ScriptReply failed = reply.listAt(i);
          if (failed.longAt(0) != -1) {
            throw failed.unexpected();
          }
          return BatchResult.failed(
              refusedInScript("complete", request.claim().key(), failed.stringAt(1)));
        });
  }

  /**
   * The failure of a batch entry whose command failed in the script: an unreadable record if the
   * key holds another type than a string or a hash (WRONGTYPE), else a store failure.
   */
  private LockBackendException refusedInScript(String verb, String key, String code) {
    return "WRONGTYPE".equals(code) ? unreadable(verb, key) : errors.refusedInScript(verb, code);
  }

  /** Writes one entry's script arguments into a batch's argument array. */
  @FunctionalInterface
  private interface EntryArgs<Q> {
    void write(Q request, byte[][] args, int at);
  }

  /** Reads one entry's result from a batch script's reply. */
  @FunctionalInterface
  private interface EntryResult<Q, R> {
    BatchResult<R> read(Q request, ScriptReply reply, int index);
  }

  /**
   * The shared batch path: checks the batch, fails the entries with bad keys, sends the rest as one
   * script call per slot group, and reassembles the results in request order.
   */
  private <Q, R> List<BatchResult<R>> batch(
      String batchVerb,
      String verb,
      LockScript script,
      List<Q> requests,
      Function<Q, String> keyOf,
      int argsPerEntry,
      EntryArgs<Q> entryArgs,
      EntryResult<Q, R> entryResult) {
    Objects.requireNonNull(requests, "requests");
    int n = requests.size();
    if (n == 0 || n > MAX_BATCH_SIZE) {
      throw new IllegalArgumentException(
          "a batch must have 1 to " + MAX_BATCH_SIZE + " entries, but had " + n);
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      String key = keyOf.apply(Objects.requireNonNull(requests.get(i), "requests[" + i + "]"));
      if (!seen.add(key)) {
        throw new IllegalArgumentException(
            "a batch must not repeat a key, but entry " + i + " repeats an earlier one");
      }
    }
    List<BatchResult<R>> results = new ArrayList<>(n);
    Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
    byte[][] redisKeys = new byte[n][];
    for (int i = 0; i < n; i++) {
      results.add(null);
      try {
        validateKey(keyOf.apply(requests.get(i)));
      } catch (IllegalArgumentException e) {
        results.set(i, BatchResult.failed(e));
        continue;
      }
      redisKeys[i] = layout.redisKey(keyOf.apply(requests.get(i)));
      int group = connection.cluster() ? SlotHash.getSlot(redisKeys[i]) : 0;
      groups.computeIfAbsent(group, g -> new ArrayList<>()).add(i);
    }
    List<List<Integer>> members = new ArrayList<>(groups.values());
    List<ScriptRunner.Pending> calls = new ArrayList<>(members.size());
    for (List<Integer> group : members) {
      byte[][] keys = new byte[group.size()][];
      byte[][] args = new byte[group.size() * argsPerEntry][];
      for (int j = 0; j < group.size(); j++) {
        int i = group.get(j);
        keys[j] = redisKeys[i];
        entryArgs.write(requests.get(i), args, j * argsPerEntry);
      }
      calls.add(scripts.dispatch(batchVerb, script, keys, args));
    }
    LockBackendException firstFailure = null;
    int failedCalls = 0;
    for (int g = 0; g < members.size(); g++) {
      List<Integer> group = members.get(g);
      try {
        ScriptReply reply = calls.get(g).await();
        if (reply.size() != group.size()) {
          throw reply.unexpected();
        }
        for (int j = 0; j < group.size(); j++) {
          int i = group.get(j);
          BatchResult<R> result;
          try {
            result = entryResult.read(requests.get(i), reply, j);
          } catch (LockBackendException e) {
            result = BatchResult.failed(e);
          }
          results.set(i, result);
        }
      } catch (LockBackendException e) {
        failedCalls++;
        if (firstFailure == null) {
          firstFailure = e;
        }
        for (int i : group) {
          results.set(i, BatchResult.failed(e));
        }
      }
    }
    if (failedCalls > 0 && failedCalls == members.size()) {
      throw firstFailure;
    }
    return results;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code EVALSHA} ({@code TYPE}, then {@code GET} and {@code PEXPIRETIME}, or {@code
   * HGETALL} for a hash of an earlier version); {@code observedAt} is the server's {@code TIME} in
   * the same script. A hash without any of the record's fields counts as no record, as it does for
   * the verbs. A string that is not a record (its stored fields: {@code value} and {@code expiry},
   * the {@code PEXPIRETIME}), a hash whose fields are unreadable (every field of the hash), or a
   * key holding another type ({@code "(type)" -> "list"}) is an {@link InvalidLockRecordException}.
   */
  @Override
  public Optional<LockRecord> inspect(String key) {
    validateKey(key);
    Stored stored = readStored(key);
    String where = errors.place("inspect");
    if (stored.type().equals("none")) {
      return Optional.empty();
    }
    if (!stored.type().equals("hash") && !stored.type().equals("string")) {
      throw notARecord(where, key, stored.type());
    }
    if (stored.type().equals("hash")
        && RECORD_FIELDS.stream().noneMatch(stored.fields()::containsKey)) {
      return Optional.empty();
    }
    return Optional.of(parse(where, key, stored));
  }

  /**
   * {@inheritDoc}
   *
   * <p>One {@code DEL}.
   */
  @Override
  public boolean forget(String key) {
    validateKey(key);
    RedisClusterCommands<byte[], byte[]> commands = connection.commands("forget");
    Long deleted;
    try {
      deleted = commands.del(layout.redisKey(key));
    } catch (RuntimeException e) {
      throw errors.failure("forget", e);
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
    RedisClusterCommands<byte[], byte[]> commands = connection.commands("purgeExpired");
    ScanArgs args = ScanArgs.Builder.matches(layout.scanPattern()).limit(SCAN_COUNT);
    ScanCursor cursor = ScanCursor.INITIAL;
    int removed = 0;
    do {
      KeyScanCursor<byte[]> page;
      try {
        page = commands.scan(cursor, args);
      } catch (RuntimeException e) {
        throw errors.failure("purgeExpired", e);
      }
      for (List<byte[]> batch : scriptBatches(page.getKeys())) {
        if (removed >= limit) {
          break;
        }
        long deleted =
            scripts.count(
                "purgeExpired",
                LockScript.PURGE,
                batch.toArray(new byte[0][]),
                number(limit - removed));
        removed += Math.toIntExact(deleted);
      }
      cursor = page;
    } while (!cursor.isFinished() && removed < limit);
    return removed;
  }

  /**
   * The records among one {@code SCAN} page, as the key lists of the purge script calls: one per
   * page, or on a cluster one per slot, since a script's keys must share one.
   */
  private Collection<List<byte[]>> scriptBatches(List<byte[]> scanned) {
    List<byte[]> records = new ArrayList<>(scanned.size());
    for (byte[] k : scanned) {
      if (layout.owns(k)) {
        records.add(k);
      }
    }
    if (connection.cluster()) {
      return SlotHash.partition(ByteArrayCodec.INSTANCE, records).values();
    }
    return records.isEmpty() ? List.of() : List.of(records);
  }

  /**
   * Closes the connection and the client, and the client resources unless they were passed in.
   * Records are untouched. Idempotent; verbs after close throw {@link IllegalStateException}.
   */
  @Override
  public void close() {
    connection.close();
  }

  @Override
  public String toString() {
    return "RedisLockBackend{" + settings.endpoint() + ", prefix '" + settings.namespace() + "'}";
  }
}
