package dev.pubsubworker.testservices;

/**
 * Where a resolved service came from, in the order {@link TestServices} tries them.
 *
 * <p>There is no "unavailable" constant: a service that cannot be had is never returned; the
 * accessor aborts the test (or fails it under {@code CI=true}) instead.
 */
public enum ServiceSource {
  /** The service's environment variable (see {@link ServiceKind#environmentVariable()}). */
  ENV_VAR("env var"),
  /**
   * This machine's own: a server already listening on its default local port, or one of Google's
   * emulators started from the local Google Cloud CLI.
   */
  LOCAL("local"),
  /** A container started through Testcontainers on a Docker engine that answered. */
  TESTCONTAINERS("Testcontainers"),
  /**
   * A server shipped in a Maven artifact and started by this JVM: a binary it runs, or an
   * in-process server ({@link PubSubEmulator#inProcess}).
   */
  EMBEDDED("embedded");

  private final String label;

  ServiceSource(String label) {
    this.label = label;
  }

  /** A short lower-case label as printed in the resolution report, e.g. {@code "env var"}. */
  public String label() {
    return label;
  }
}
