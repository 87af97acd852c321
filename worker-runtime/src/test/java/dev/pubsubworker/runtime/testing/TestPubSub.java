package dev.pubsubworker.runtime.testing;

import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.TestServices;

/**
 * The one place the runtime's tests get Pub/Sub from. By default the embedded server ({@link
 * #embedded()}), one per test JVM, which needs nothing installed; {@link #googleEmulator()} for the
 * fidelity tests that also run on Google's emulator. Worker processes that tests start reach the
 * embedded server through its {@link PubSubEmulator#hostPort()}, like an emulator.
 */
public final class TestPubSub {

  /** A Pub/Sub server for a parameterised test. */
  public enum Server {
    /** The in-process embedded server. */
    EMBEDDED("embedded server"),
    /** Google's emulator from the test services (skipped where missing, a failure in CI). */
    GOOGLE_EMULATOR("Google's emulator");

    private final String title;

    Server(String title) {
      this.title = title;
    }

    /** The server's helpers (starting it on first use). */
    public PubSubEmulator pubsub() {
      return this == EMBEDDED ? embedded() : googleEmulator();
    }

    @Override
    public String toString() {
      return title;
    }
  }

  private static EmbeddedPubSub server;
  private static PubSubEmulator embedded;

  private TestPubSub() {}

  /** The embedded server of this test JVM, started on first use and stopped at JVM exit. */
  public static synchronized PubSubEmulator embedded() {
    if (embedded == null) {
      server = EmbeddedPubSub.start();
      embedded = PubSubEmulator.inProcess(server.hostPort(), server);
    }
    return embedded;
  }

  /**
   * The server behind {@link #embedded()} itself, for what only it can tell or do (open streams,
   * fault injection, its clock).
   */
  public static synchronized EmbeddedPubSub embeddedServer() {
    embedded();
    return server;
  }

  /** Google's Pub/Sub emulator, from {@link TestServices#pubsub()}. */
  public static PubSubEmulator googleEmulator() {
    return TestServices.pubsub();
  }
}
