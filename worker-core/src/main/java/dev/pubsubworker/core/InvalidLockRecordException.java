package dev.pubsubworker.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The store holds a record for the key that the backend cannot read: a state other than exactly
 * {@code CLAIMED} or {@code DONE}, a fence outside 1..{@link LockBackend#MAX_FENCE}, a time outside
 * 0..{@link LockBackend#MAX_EPOCH_MILLIS}, a malformed claim token, or a field missing or of the
 * wrong type. Something other than this backend wrote it (a migration, a hand edit, another
 * program, a bug), so no answer about the key can be trusted: the backend reports this instead of
 * guessing one, for that key only, and changes nothing.
 *
 * <p>Thrown by every verb of {@link LockBackend} (and for the one entry of a {@link
 * BatchLockBackend} batch) that finds such a record, and by {@link LockAdmin#inspect}, which is how
 * an operator sees the record as stored ({@link #storedFields()}). Unlike other {@link
 * LockBackendException}s the outcome is known: nothing was written, and retrying cannot help until
 * the record is removed with {@link LockAdmin#forget} (or purged once its {@code expiresAt} has
 * passed). The {@link IdempotencyGuard} does not retry it and never runs the work for such a key.
 *
 * <p>The message names the verb, the backend's namespace and the problem, never the key; {@link
 * #key()} has it.
 */
public final class InvalidLockRecordException extends LockBackendException {

  private static final long serialVersionUID = 1L;

  private final String key;
  private final String problem;
  private final transient Map<String, String> storedFields;

  /**
   * @param where the verb and the backend's namespace, e.g. {@code "claim failed on SQL table
   *     'locks' (POSTGRESQL)"}
   * @param key the key whose record is unreadable
   * @param problem what is wrong with it, e.g. {@code "state 'X' is neither CLAIMED nor DONE"}
   * @param storedFields the record's fields as stored, each as text, in the store's order; fields
   *     the store does not have are absent
   */
  public InvalidLockRecordException(
      String where, String key, String problem, Map<String, String> storedFields) {
    super(
        Objects.requireNonNull(where, "where")
            + ": the key's record is not one this backend can read ("
            + Objects.requireNonNull(problem, "problem")
            + "); nothing was changed. Inspect the key to see it, and forget it so that the key"
            + " can be claimed again");
    this.key = Objects.requireNonNull(key, "key");
    this.problem = problem;
    this.storedFields = Collections.unmodifiableMap(new LinkedHashMap<>(storedFields));
  }

  /** The key whose record is unreadable. */
  public String key() {
    return key;
  }

  /** What is wrong with the record, in a few words. */
  public String problem() {
    return problem;
  }

  /**
   * The record's fields as the store holds them, each as text (numbers in decimal, times in epoch
   * milliseconds), in the store's order, including fields that are not part of a lock record;
   * fields the store does not have are absent. Unmodifiable; empty after deserialization.
   */
  public Map<String, String> storedFields() {
    return storedFields == null ? Map.of() : storedFields;
  }
}
