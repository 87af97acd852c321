package dev.pubsubworker.runtime.observability;

import com.google.api.core.InternalApi;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.runtime.config.ObservabilityConfig;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.store.LockStoreCalls;
import dev.pubsubworker.runtime.worker.Worker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's metrics, health and their HTTP server, from {@code pubsub-worker.observability}.
 *
 * <pre>{@code
 * try (Observability obs = Observability.create(config)) {
 *   Worker worker = Worker.newBuilder(config).plugins(plugins)
 *       .guardListeners(obs::guardListeners).dispatchListeners(obs.dispatchListeners()).build();
 *   obs.start(worker);   // /healthz 200, /readyz 503 until the subscribers pull
 *   worker.start();
 *   worker.awaitStopped();
 * }
 * }</pre>
 *
 * <p>{@link #create} only builds: a {@link PrometheusMeterRegistry} (or the caller's registry, see
 * {@link #create(WorkerConfig, MeterRegistry)}) with {@link WorkerMetrics} and the JVM and process
 * binders (memory, GC, threads, class loading, processor, uptime, file descriptors, JVM info).
 * {@link #start} binds the HTTP server (unless the port is 0) and starts the lock-store readiness
 * probe; {@link #close} stops both and the GC binder's listeners. Start it before {@link
 * Worker#start()} so that probes see "alive, not ready" while the worker starts rather than a
 * refused connection.
 *
 * <p>Endpoints: {@code GET /metrics} (Prometheus text), {@code GET /healthz} (200 unless the worker
 * failed or a lock-store call has been in progress longer than {@code lock-store-stuck-after}),
 * {@code GET /readyz} (200 only while every subscriber pulls and the lock store answered within
 * {@code lock-store-stale-after}); see {@code worker-runtime/README.md}. Thread-safe.
 */
public final class Observability implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Observability.class);

  private final ObservabilityConfig config;
  private final List<String> subscriptionIds;
  private final Optional<InetSocketAddress> bindAddress;
  private final Clock clock;
  private final MeterRegistry registry;
  private final boolean ownsRegistry;
  private final WorkerMetrics metrics;
  private final LockStoreFreshness freshness;
  private final Tracing tracing;
  private final List<MeterBinder> binders;
  private LockStoreProbe probe;
  private ObservabilityHttpServer server;
  private boolean started;
  private boolean closed;

  private Observability(
      WorkerConfig config,
      Optional<InetSocketAddress> bindAddress,
      Clock clock,
      Optional<MeterRegistry> callersRegistry) {
    this.config = config.observability();
    this.subscriptionIds =
        config.orderedSubscriptions().stream().map(SubscriptionConfig::id).toList();
    this.bindAddress = bindAddress;
    this.clock = clock;
    this.ownsRegistry = callersRegistry.isEmpty();
    this.registry =
        callersRegistry.orElseGet(() -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    this.metrics = new WorkerMetrics(subscriptionIds);
    this.freshness = new LockStoreFreshness(clock);
    this.tracing = Tracing.create(config.observability().tracing(), config.projectId());
    // A caller's registry gets the worker's own meters only: its JVM and process meters are the
    // application's to bind (Spring Boot, for one, binds them already).
    this.binders =
        ownsRegistry
            ? List.of(
                metrics,
                new JvmMemoryMetrics(),
                new JvmGcMetrics(),
                new JvmThreadMetrics(),
                new ClassLoaderMetrics(),
                new JvmInfoMetrics(),
                new ProcessorMetrics(),
                new UptimeMetrics(),
                new FileDescriptorMetrics())
            : List.of(metrics);
    binders.forEach(b -> b.bindTo(registry));
  }

  /**
   * Metrics and health for {@code config}; the HTTP server binds {@code http-host:http-port}, or is
   * off when the port is 0. Nothing is started.
   */
  public static Observability create(WorkerConfig config) {
    ObservabilityConfig o = config.observability();
    Optional<InetSocketAddress> address =
        o.httpPort() == 0
            ? Optional.empty()
            : Optional.of(new InetSocketAddress(o.httpHost(), o.httpPort()));
    return new Observability(config, address, Clock.systemUTC(), Optional.empty());
  }

  /**
   * Metrics and health for {@code config}, with the worker's meters in the caller's {@code
   * registry} (the application's, e.g. Spring Boot's, or a composite). Only the worker's own meters
   * are bound there, not the JVM and process ones. The HTTP server binds as configured; its {@code
   * /metrics} is the registry's scrape when {@code registry} is a {@link PrometheusMeterRegistry},
   * else it answers 404 (the metrics go where the registry sends them). {@link #close} leaves the
   * registry open. Nothing is started.
   */
  public static Observability create(WorkerConfig config, MeterRegistry registry) {
    ObservabilityConfig o = config.observability();
    Optional<InetSocketAddress> address =
        o.httpPort() == 0
            ? Optional.empty()
            : Optional.of(new InetSocketAddress(o.httpHost(), o.httpPort()));
    return new Observability(
        config,
        address,
        Clock.systemUTC(),
        Optional.of(Objects.requireNonNull(registry, "registry")));
  }

  /**
   * Metrics and health for {@code config}, with the HTTP server on {@code httpAddress} instead of
   * the configured one: port 0 there means a port the OS picks ({@link #httpAddress()} tells
   * which), for tests and for tools that run a worker next to others. Nothing is started.
   */
  public static Observability create(WorkerConfig config, InetSocketAddress httpAddress) {
    return new Observability(config, Optional.of(httpAddress), Clock.systemUTC(), Optional.empty());
  }

  /**
   * The registry the worker's meters are in: its own {@link PrometheusMeterRegistry} (whose scrape
   * {@code /metrics} serves), or the one given to {@link #create(WorkerConfig, MeterRegistry)}.
   */
  public MeterRegistry registry() {
    return registry;
  }

  /** The worker's own metrics. */
  @InternalApi("the meters behind this; read them in registry()")
  public WorkerMetrics metrics() {
    return metrics;
  }

  /**
   * The listeners of subscription {@code subscriptionId}'s guard: what to pass to {@link
   * Worker.Builder#guardListeners} as {@code observability::guardListeners}.
   */
  public List<GuardListener> guardListeners(String subscriptionId) {
    return List.of(metrics.guardListener(subscriptionId), freshness, tracing.guardListener());
  }

  /** What to pass to {@link Worker.Builder#dispatchListeners}. */
  public List<DispatchListener> dispatchListeners() {
    return List.of(metrics, tracing);
  }

  /** The tracing of deliveries ({@code observability.tracing}). */
  @InternalApi("the spans behind this")
  public Tracing tracing() {
    return tracing;
  }

  /**
   * Starts the HTTP server (if on) and the lock-store probe for {@code worker}.
   *
   * @throws java.io.UncheckedIOException if the HTTP address cannot be bound; nothing is left
   *     running
   * @throws IllegalStateException if already started or closed
   */
  public void start(Worker worker) {
    start(WorkerStatus.of(worker), worker::admin, worker.lockStoreCalls());
    // The probe reads the lock store; it must be gone before the worker closes the store.
    worker.onStop(this::stopProbe);
  }

  /** Stops the lock-store probe (see {@link LockStoreProbe#stop()}); idempotent. */
  synchronized void stopProbe() {
    if (probe != null) {
      probe.stop();
    }
  }

  /**
   * Starts against any worker status and lock store (tests wrap a real worker's), with no
   * lock-store calls tracked.
   */
  void start(WorkerStatus status, Supplier<LockAdmin> admin) {
    start(status, admin, new LockStoreCalls(clock));
  }

  /** Starts against any worker status, lock store and tracker of lock-store calls. */
  synchronized void start(WorkerStatus status, Supplier<LockAdmin> admin, LockStoreCalls calls) {
    if (started || closed) {
      throw new IllegalStateException("observability can be started once, before close()");
    }
    started = true;
    Gauge.builder(MetricNames.LOCK_STORE_OLDEST_CALL, calls, Observability::oldestCallSeconds)
        .description("How long the oldest lock-store call in progress has been running")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder(MetricNames.LOCK_STORE_CALLS_IN_PROGRESS, calls, LockStoreCalls::inProgress)
        .description("Lock-store calls in progress")
        .register(registry);
    for (String id : subscriptionIds) {
      Gauge.builder(
              MetricNames.HANDLER_OLDEST_AGE,
              status,
              s -> s.oldestHandlerAge(id).map(a -> a.toMillis() / 1000.0).orElse(0.0))
          .description("How long the oldest delivery in progress on a handler thread has run")
          .tag(MetricNames.SUBSCRIPTION, id)
          .baseUnit("seconds")
          .register(registry);
    }
    Health health =
        new Health(
            status,
            freshness,
            config.lockStoreStaleAfter(),
            clock,
            calls,
            config.lockStoreStuckAfter(),
            config.handlerStuckAfter());
    if (bindAddress.isPresent()) {
      server = ObservabilityHttpServer.start(bindAddress.get(), registry, health);
      InetSocketAddress a = server.address();
      log.info(
          "metrics and health on http://{}:{} (/metrics, /healthz, /readyz)",
          a.getHostString(),
          a.getPort());
    }
    probe = new LockStoreProbe(admin, config.lockStoreProbeInterval(), freshness, metrics);
    probe.start();
  }

  private static double oldestCallSeconds(LockStoreCalls calls) {
    return calls.oldest().map(c -> c.age(calls.clock().instant()).toMillis() / 1000.0).orElse(0.0);
  }

  /** Where the HTTP server listens, once started; empty if it is off. */
  public synchronized Optional<InetSocketAddress> httpAddress() {
    return server == null ? Optional.empty() : Optional.of(server.address());
  }

  /**
   * Stops the HTTP server and the probe, flushes the spans not exported yet (at most a few
   * seconds), and unbinds the GC listeners. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (server != null) {
      server.stop();
    }
    if (probe != null) {
      probe.stop();
    }
    for (MeterBinder b : binders) {
      if (b instanceof AutoCloseable c) {
        try {
          c.close();
        } catch (Exception e) {
          log.debug("closing {} failed", b.getClass().getName(), e);
        }
      }
    }
    tracing.close();
    if (ownsRegistry) {
      registry.close();
    }
  }
}
