package dev.pubsubworker.backend.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts, one per verb and one per batch verb: the shared prelude, then the parts the body
 * shares with another script (the one-record claim and complete, which the single and the batch
 * verbs both run), then the body, all read from this package's resources and joined with newlines.
 * Each is identified on the server by the SHA-1 of its text, which is computed here so that {@code
 * EVALSHA} needs no round trip to learn it.
 */
enum LockScript {
  CLAIM("claim.lua", "claim_entry.lua"),
  CLAIM_ALL("claim_all.lua", "claim_entry.lua"),
  COMPLETE("complete.lua", "complete_entry.lua"),
  COMPLETE_ALL("complete_all.lua", "complete_entry.lua"),
  RELEASE("release.lua"),
  EXTEND("extend.lua"),
  INSPECT("inspect.lua"),
  PURGE("purge.lua");

  private final byte[] source;
  private final String sha1;

  LockScript(String body, String... parts) {
    StringBuilder text = new StringBuilder(read("prelude.lua"));
    for (String part : parts) {
      text.append('\n').append(read(part));
    }
    text.append('\n').append(read(body));
    this.source = text.toString().getBytes(StandardCharsets.UTF_8);
    this.sha1 = sha1Hex(source);
  }

  /** The script's text as sent with {@code EVAL} or {@code SCRIPT LOAD}. */
  byte[] source() {
    return source.clone();
  }

  /** The SHA-1 digest {@code EVALSHA} names the script by. */
  String sha1() {
    return sha1;
  }

  private static String read(String resource) {
    try (InputStream in = LockScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("script resource missing from the jar: " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script resource " + resource, e);
    }
  }

  private static String sha1Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-1", e);
    }
  }
}
