package dev.pubsubworker.core;

import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A key as the guard's log lines show it, formatted (e.g. hashed) only when a line is actually
 * written, and at most once: SLF4J calls {@link #toString} only for an enabled line, so a call that
 * logs nothing never pays for the format. Thread-safe (the memo is an idempotent race).
 */
final class KeyForLogs {

  private final String key;
  private final UnaryOperator<String> format;
  private @Nullable String formatted;

  KeyForLogs(String key, UnaryOperator<String> format) {
    this.key = key;
    this.format = format;
  }

  @Override
  public String toString() {
    String f = formatted;
    if (f == null) {
      f = format.apply(key);
      formatted = f;
    }
    return f;
  }
}
