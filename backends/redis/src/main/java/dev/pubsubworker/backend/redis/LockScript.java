package dev.pubsubworker.backend.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts, one per verb: the shared prelude followed by the verb's body, both read from
 * this package's resources. Each is identified on the server by the SHA-1 of its text, which is
 * computed here so that {@code EVALSHA} needs no round trip to learn it.
 */
enum LockScript {
  CLAIM("claim.lua"),
  COMPLETE("complete.lua"),
  RELEASE("release.lua"),
  EXTEND("extend.lua"),
  INSPECT("inspect.lua"),
  PURGE("purge.lua");

  private final byte[] source;
  private final String sha1;

  LockScript(String resource) {
    String text = read("prelude.lua") + "\n" + read(resource);
    this.source = text.getBytes(StandardCharsets.UTF_8);
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
