package dev.pubsubworker.testservices;

import com.google.cloud.NoCredentials;
import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.DatastoreOptions;
import java.util.Objects;

/**
 * One of Google's Datastore-API emulators: the Cloud Datastore emulator (started with {@code
 * --testing}: in memory, strongly consistent, optimistic transactions where a conflicting commit
 * gets {@code ABORTED}) or the Firestore emulator in Datastore mode (pessimistic locking: a waiting
 * transaction may get {@code ABORTED} "Transaction lock timeout"). {@link #kind()} says which.
 *
 * <p>One emulator serves every test in the JVM: give each test its own namespace ({@link
 * #newNamespace()}). Immutable and thread-safe.
 */
public final class DatastoreEmulator {

  private final ServiceKind kind;
  private final HostPort hostPort;
  private final String projectId;
  private final ServiceSource source;

  DatastoreEmulator(ServiceKind kind, HostPort hostPort, String projectId, ServiceSource source) {
    if (kind != ServiceKind.DATASTORE_EMULATOR && kind != ServiceKind.FIRESTORE_EMULATOR) {
      throw new IllegalArgumentException("not a Datastore-API emulator: " + kind);
    }
    this.kind = kind;
    this.hostPort = Objects.requireNonNull(hostPort);
    this.projectId = Objects.requireNonNull(projectId);
    this.source = Objects.requireNonNull(source);
  }

  /**
   * {@link ServiceKind#DATASTORE_EMULATOR} or {@link ServiceKind#FIRESTORE_EMULATOR} (Firestore in
   * Datastore mode).
   */
  public ServiceKind kind() {
    return kind;
  }

  /**
   * Where the emulator listens, {@code "host:port"}: the value for {@code DATASTORE_EMULATOR_HOST}
   * and for {@code DatastoreOptions.Builder.setHost}.
   */
  public String hostPort() {
    return hostPort.toString();
  }

  /** The project id to use (the emulator accepts any). */
  public String projectId() {
    return projectId;
  }

  /** Where this emulator came from. */
  public ServiceSource source() {
    return source;
  }

  /**
   * A namespace no other test uses ({@link TestServices#uniqueName(String)} with prefix {@code
   * "ns"}); the emulator creates it on first write.
   */
  public String newNamespace() {
    return TestServices.uniqueName("ns");
  }

  /**
   * Client options for this emulator: its host over plain HTTP, {@link #projectId()}, no
   * credentials, and {@code namespace} as the default namespace.
   *
   * @param namespace e.g. from {@link #newNamespace()}; empty for the default namespace
   */
  public DatastoreOptions options(String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    return DatastoreOptions.newBuilder()
        .setHost("http://" + hostPort)
        .setProjectId(projectId)
        .setNamespace(namespace)
        .setCredentials(NoCredentials.getInstance())
        .build();
  }

  /** A client for {@code namespace}; see {@link #options(String)}. The caller closes it. */
  public Datastore newClient(String namespace) {
    return options(namespace).getService();
  }

  /** The address, the kind and the source. */
  @Override
  public String toString() {
    return kind.displayName() + " " + hostPort + " (" + source.label() + ")";
  }
}
