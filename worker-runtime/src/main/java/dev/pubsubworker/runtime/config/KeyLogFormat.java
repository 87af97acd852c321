package dev.pubsubworker.runtime.config;

import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.function.UnaryOperator;

/** How lock keys appear in log lines ({@code pubsub-worker.logging.key-format}). */
public enum KeyLogFormat {
  /** As they are. */
  PLAIN,
  /** The first 16 hex digits of their SHA-256, for keys that carry business data. */
  SHA256;

  /** The function that renders a key this way. */
  public UnaryOperator<String> renderer() {
    return this == PLAIN ? UnaryOperator.identity() : KeyLogFormat::hash;
  }

  private static String hash(String key) {
    byte[] d = Hashing.sha256().hashString(key, StandardCharsets.UTF_8).asBytes();
    return "sha256:" + HexFormat.of().formatHex(d, 0, 8);
  }
}
