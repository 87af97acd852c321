package dev.pubsubworker.backend.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Lettuce client of one backend and its one shared connection (standalone or cluster-aware).
 *
 * <p>Creating it does no I/O. The connection is opened by the first {@link #commands} call,
 * re-attempted by a later call if that failed, and re-established by the driver in the background
 * if it drops. Commands are never replayed after a reconnect and are rejected at once while
 * disconnected, so a failure is reported promptly and the caller decides to retry. Thread-safe.
 */
final class RedisConnection implements AutoCloseable {

  // Logs under the backend's name, the one category operators configure for this store.
  private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

  private final RedisErrors errors;
  private final String endpoint;
  private final String namespace;
  private final Consumer<RedisClusterCommands<byte[], byte[]>> onConnect;
  private final AbstractRedisClient client;
  private final ClientResources ownResources;
  private final boolean cluster;
  private final Object connectLock = new Object();
  private volatile Link link;
  private volatile boolean closed;

  /** An open connection and its synchronous and asynchronous commands. */
  private record Link(
      StatefulConnection<byte[], byte[]> connection,
      RedisClusterCommands<byte[], byte[]> sync,
      RedisClusterAsyncCommands<byte[], byte[]> async) {}

  /**
   * @param onConnect runs once on each new connection before it is used (loads the scripts); a
   *     {@link RuntimeException} from it closes that connection and fails the call
   */
  RedisConnection(
      RedisLockSettings settings,
      RedisErrors errors,
      Consumer<RedisClusterCommands<byte[], byte[]>> onConnect) {
    this.errors = errors;
    this.endpoint = settings.endpoint();
    this.namespace = settings.namespace();
    this.onConnect = onConnect;
    this.cluster = settings.cluster();
    RedisURI uri =
        RedisURI.builder(settings.redisUri())
            .withTimeout(settings.commandTimeout())
            .withClientName(settings.clientName())
            .build();
    ClientResources resources = settings.clientResources().orElse(null);
    if (resources == null) {
      resources = defaultResources();
      this.ownResources = resources;
    } else {
      this.ownResources = null;
    }
    if (cluster) {
      RedisClusterClient clusterClient = RedisClusterClient.create(resources, uri);
      ClusterClientOptions.Builder options = ClusterClientOptions.builder();
      configure(options, settings);
      options.topologyRefreshOptions(
          ClusterTopologyRefreshOptions.builder()
              // Adaptive refresh on MOVED/ASK/reconnects is the driver's default.
              .enablePeriodicRefresh(Duration.ofMinutes(1))
              .build());
      clusterClient.setOptions(options.build());
      this.client = clusterClient;
    } else {
      RedisClient redisClient = RedisClient.create(resources, uri);
      ClientOptions.Builder options = ClientOptions.builder();
      configure(options, settings);
      redisClient.setOptions(options.build());
      this.client = redisClient;
    }
  }

  /**
   * The driver's default resources (event loops, timer) without its command latency recorder. The
   * driver records every command's latency into histograms on its event loop when HdrHistogram and
   * LatencyUtils are on the class path (Micrometer brings both) and publishes them as events nobody
   * here reads: 6-7 % of the event loop's samples in a profile of the end-to-end benchmark. The
   * guard's own metrics time the verbs. Resources passed in are used as they are.
   */
  private static ClientResources defaultResources() {
    return DefaultClientResources.builder()
        .commandLatencyRecorder(CommandLatencyRecorder.disabled())
        .build();
  }

  /** The driver options both client kinds share. */
  private static void configure(ClientOptions.Builder options, RedisLockSettings settings) {
    options
        .autoReconnect(true)
        // Fail fast while the connection is down instead of queueing until the timeout.
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        // A command in flight when the connection dropped fails instead of being re-sent after
        // the reconnect: its caller has been told it failed and may already be retrying.
        .replayFilter(command -> true)
        .socketOptions(
            SocketOptions.builder()
                .connectTimeout(settings.connectTimeout())
                .keepAlive(true)
                .build())
        .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()));
    settings.sslOptions().ifPresent(options::sslOptions);
  }

  /** Whether this is a Redis Cluster connection (a script's keys must then share one slot). */
  boolean cluster() {
    return cluster;
  }

  /** Lets a test watch the commands the client sends; call before connecting. */
  void addCommandListener(CommandListener listener) {
    client.addListener(listener);
  }

  /**
   * The synchronous commands of the shared connection, connecting first if needed.
   *
   * @param verb names the caller in the error if connecting fails
   * @throws dev.pubsubworker.core.LockBackendException if connecting fails
   * @throws IllegalStateException if closed
   */
  RedisClusterCommands<byte[], byte[]> commands(String verb) {
    Link l = link;
    if (l == null) {
      l = connect(verb);
    }
    return l.sync();
  }

  /**
   * The asynchronous commands of the shared connection (for several script calls in flight at once:
   * one per slot of a batch on a cluster), connecting first if needed.
   *
   * @param verb names the caller in the error if connecting fails
   * @throws dev.pubsubworker.core.LockBackendException if connecting fails
   * @throws IllegalStateException if closed
   */
  RedisClusterAsyncCommands<byte[], byte[]> async(String verb) {
    Link l = link;
    if (l == null) {
      l = connect(verb);
    }
    return l.async();
  }

  private Link connect(String verb) {
    synchronized (connectLock) {
      if (closed) {
        throw new IllegalStateException("the Redis lock backend is closed");
      }
      if (link != null) {
        return link;
      }
      Link l;
      try {
        if (client instanceof RedisClusterClient clusterClient) {
          StatefulRedisClusterConnection<byte[], byte[]> c =
              clusterClient.connect(ByteArrayCodec.INSTANCE);
          l = new Link(c, c.sync(), c.async());
        } else {
          StatefulRedisConnection<byte[], byte[]> c =
              ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
          l = new Link(c, c.sync(), c.async());
        }
      } catch (RuntimeException e) {
        throw errors.failure(verb, e);
      }
      try {
        onConnect.accept(l.sync());
      } catch (RuntimeException e) {
        l.connection().close();
        throw errors.failure(verb, e);
      }
      log.info("connected to {} for lock records under prefix '{}'", endpoint, namespace);
      link = l;
      return l;
    }
  }

  /**
   * Closes the connection and shuts the client down, and its resources unless they were passed in.
   * Idempotent; {@link #commands} afterwards throws {@link IllegalStateException}.
   */
  @Override
  public void close() {
    synchronized (connectLock) {
      if (closed) {
        return;
      }
      closed = true;
      Link l = link;
      link = null;
      try {
        if (l != null) {
          l.connection().close();
        }
      } finally {
        try {
          client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        } finally {
          if (ownResources != null) {
            ownResources.shutdown(0, 2, TimeUnit.SECONDS);
          }
        }
      }
    }
  }
}
