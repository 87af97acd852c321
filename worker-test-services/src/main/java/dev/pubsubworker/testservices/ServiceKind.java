package dev.pubsubworker.testservices;

/**
 * The services that {@link TestServices} can hand a test.
 *
 * <p>Each kind names the environment variable that points a test run at an existing instance
 * (checked first, and authoritative when set: an instance that does not answer is reported, never
 * silently replaced) and what to install when nothing can be had.
 */
public enum ServiceKind {
  /** Redis 6 or later; a {@link RedisService}. */
  REDIS(
      "Redis",
      "REDIS_URL",
      "install and start redis-server on 127.0.0.1:6379, or set REDIS_URL=redis://host:port"),
  /** PostgreSQL; a {@link SqlDatabase}. */
  POSTGRES(
      "PostgreSQL",
      "POSTGRES_URL",
      "install and start PostgreSQL on 127.0.0.1:5432 with a database named test, or set"
          + " POSTGRES_URL=postgresql://user:password@host:port/db"),
  /** MariaDB (or MySQL); a {@link SqlDatabase}. */
  MARIADB(
      "MariaDB",
      "MARIADB_URL",
      "install and start MariaDB on 127.0.0.1:3306 (user root, empty password, database test), or"
          + " set MARIADB_URL=mariadb://user:password@host:port/db"),
  /** Google's Pub/Sub emulator; a {@link PubSubEmulator}. */
  PUBSUB_EMULATOR(
      "Pub/Sub emulator",
      "PUBSUB_EMULATOR_HOST",
      "install the Google Cloud CLI with the Pub/Sub emulator (apt-get install"
          + " google-cloud-cli-pubsub-emulator), or set PUBSUB_EMULATOR_HOST=host:port"),
  /**
   * Google's Cloud Datastore emulator (started with {@code --testing}); a {@link
   * DatastoreEmulator}.
   */
  DATASTORE_EMULATOR(
      "Datastore emulator",
      "DATASTORE_EMULATOR_HOST",
      "install the Google Cloud CLI with the Datastore emulator (apt-get install"
          + " google-cloud-cli-datastore-emulator), or set DATASTORE_EMULATOR_HOST=host:port"),
  /** Google's Firestore emulator in Datastore mode; a {@link DatastoreEmulator}. */
  FIRESTORE_EMULATOR(
      "Firestore emulator (Datastore mode)",
      "FIRESTORE_EMULATOR_HOST",
      "install the Google Cloud CLI with the Firestore emulator (apt-get install"
          + " google-cloud-cli-firestore-emulator), or set FIRESTORE_EMULATOR_HOST=host:port of one"
          + " started with --database-mode=datastore-mode");

  private final String displayName;
  private final String environmentVariable;
  private final String remedy;

  ServiceKind(String displayName, String environmentVariable, String remedy) {
    this.displayName = displayName;
    this.environmentVariable = environmentVariable;
    this.remedy = remedy;
  }

  /** A human-readable name, e.g. {@code "Pub/Sub emulator"}. */
  public String displayName() {
    return displayName;
  }

  /**
   * The environment variable that, when set, names the instance to use instead of any local
   * default, e.g. {@code PUBSUB_EMULATOR_HOST}.
   */
  public String environmentVariable() {
    return environmentVariable;
  }

  /** What to install or set when the service cannot be had (one clause, no trailing period). */
  String remedy() {
    return remedy;
  }
}
