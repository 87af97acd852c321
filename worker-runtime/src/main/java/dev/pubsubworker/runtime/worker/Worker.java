package dev.pubsubworker.runtime.worker;

import com.google.api.core.InternalApi;
import com.google.common.util.concurrent.AbstractIdleService;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.Service;
import com.google.inject.CreationException;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Key;
import com.google.inject.Module;
import com.google.inject.Stage;
import com.google.inject.TypeLiteral;
import com.google.inject.spi.ErrorDetail;
import com.google.inject.spi.Message;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.DurationText;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.pubsub.TerminalFailures;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.KnownSecrets;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.DeadLetterRedrive;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.pubsub.PoisonExceptions;
import dev.pubsubworker.runtime.pubsub.PubSubConnection;
import dev.pubsubworker.runtime.pubsub.RedriveRequest;
import dev.pubsubworker.runtime.pubsub.RedriveSummary;
import dev.pubsubworker.runtime.pubsub.RunningHandler;
import dev.pubsubworker.runtime.pubsub.StreamHealth;
import dev.pubsubworker.runtime.pubsub.SubscriptionSet;
import dev.pubsubworker.runtime.store.LockStoreCalls;
import dev.pubsubworker.runtime.store.LockStoreModules;
import dev.pubsubworker.runtime.store.OpenResources;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Formatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker process's core: the injector built from the runtime's module, the lock store's module
 * and every plugin's module, and the subscriptions it pulls.
 *
 * <p>Lifecycle: {@link Builder#build} checks everything that can be checked without I/O (handler
 * names, duplicate handlers, plugin modules) and throws {@link InvalidConfigException} listing
 * every problem; {@link #start} opens the lock store, reads the subscriptions and starts pulling;
 * {@link #stop} stops gracefully (idempotent); {@link #awaitStopped} blocks until then. A
 * subscriber that fails while running stops the whole worker, and {@link #failure()} says why.
 * Start and stop run as a Guava {@link AbstractIdleService} ({@link #service()}), on a thread of
 * their own each.
 */
public final class Worker {

  /**
   * How long a graceful {@link #stop()} may take past {@code shutdown-grace}: {@link
   * SubscriptionSet#RELEASE_BUDGET} to release abandoned claims, {@link
   * SubscriptionSet#TERMINATION_BUDGET} for the subscribers to flush their nacks and stop, and 5 s
   * to close the Pub/Sub channel. Closing the lock store comes on top, bounded by the store's own
   * timeouts (it is idle by then). Deployments keep their kill timeout above grace + this bound.
   */
  public static final Duration STOP_BOUND =
      SubscriptionSet.RELEASE_BUDGET
          .plus(SubscriptionSet.TERMINATION_BUDGET)
          .plus(PubSubConnection.CLOSE_TIMEOUT);

  private static final Logger log = LoggerFactory.getLogger(Worker.class);

  private final WorkerConfig config;
  private final Injector injector;
  private final List<DispatchListener> dispatchListeners;
  private final UnaryOperator<String> keyLogFormat;
  private final Function<String, List<GuardListener>> guardListeners;
  private final Service lifecycle = new Lifecycle();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final StreamHealth streams;
  private final List<Runnable> onStop = new CopyOnWriteArrayList<>();
  private volatile PubSubConnection connection;
  private volatile boolean startAborted;
  private volatile Thread startThread;
  private volatile SubscriptionSet subscriptions;
  private volatile SubscriptionGuards guards;
  private volatile KnownSecrets.Held secrets;
  private volatile Map<String, TerminalFailures> terminalFailures = Map.of();

  private Worker(
      WorkerConfig config,
      Injector injector,
      List<DispatchListener> dispatchListeners,
      UnaryOperator<String> keyLogFormat,
      Function<String, List<GuardListener>> guardListeners) {
    this.config = config;
    this.injector = injector;
    this.dispatchListeners = List.copyOf(dispatchListeners);
    this.keyLogFormat = keyLogFormat;
    this.guardListeners = guardListeners;
    this.streams =
        new StreamHealth(
            Clock.systemUTC(),
            new DispatchListeners(this.dispatchListeners),
            config.observability().pubsubStreamSettleTime());
    lifecycle.addListener(
        new Service.Listener() {
          @Override
          public void terminated(Service.State from) {
            if (from == Service.State.NEW) { // stopped before it started: close what tools opened
              beginStop();
              closeResources();
            }
          }

          @Override
          public void failed(Service.State from, Throwable failure) {
            if (from == Service.State.STOPPING && !(startAborted && isAbort(failure))) {
              log.error("the worker's stop failed; the lock store and clients are closed", failure);
            }
          }
        },
        MoreExecutors.directExecutor());
  }

  /**
   * A builder of a worker on {@code config}: add the plugins and the listeners, then {@link
   * Builder#build()}.
   *
   * <pre>{@code
   * Worker worker =
   *     Worker.newBuilder(config)
   *         .plugins(PluginLoader.load(config, loader))
   *         .guardListeners(observability::guardListeners)
   *         .dispatchListeners(observability.dispatchListeners())
   *         .build();
   * }</pre>
   */
  public static Builder newBuilder(WorkerConfig config) {
    return new Builder(config);
  }

  /**
   * Collects what a worker is built from besides its config. Not thread-safe; each {@link #build}
   * builds a new worker from what was set so far.
   */
  public static final class Builder {
    private final WorkerConfig config;
    private final List<LoadedPlugin> plugins = new ArrayList<>();
    private final List<GuardListener> sharedGuardListeners = new ArrayList<>();
    private final List<DispatchListener> dispatchListeners = new ArrayList<>();
    private Function<String, List<GuardListener>> guardListeners = id -> List.of();

    private Builder(WorkerConfig config) {
      this.config = Objects.requireNonNull(config, "config");
    }

    /** Adds plugins to install (their modules bind the handlers the subscriptions name). */
    public Builder plugins(List<LoadedPlugin> value) {
      plugins.addAll(value);
      return this;
    }

    /**
     * Observers of each subscription's guard (metrics, tracing), by subscription id: called once
     * per subscription when its guard is built. Replaces an earlier function; the listeners of
     * {@link #guardListener} observe every guard besides these.
     */
    public Builder guardListeners(Function<String, List<GuardListener>> value) {
      this.guardListeners = Objects.requireNonNull(value, "guardListeners");
      return this;
    }

    /** Adds an observer of every subscription's guard. */
    public Builder guardListener(GuardListener value) {
      sharedGuardListeners.add(Objects.requireNonNull(value, "guardListener"));
      return this;
    }

    /** Adds observers of dispatch outcomes (metrics, tests). */
    public Builder dispatchListeners(List<DispatchListener> value) {
      value.forEach(l -> dispatchListeners.add(Objects.requireNonNull(l, "dispatchListener")));
      return this;
    }

    /**
     * Builds the worker. Nothing is opened yet. Each subscription gets its own guard, built from
     * its settings when the worker starts (all on the one lock store and one heartbeat scheduler);
     * keys appear in log lines as {@code logging.key-format} says.
     *
     * @throws InvalidConfigException if a plugin module fails, two plugins bind one handler name, a
     *     subscription names a handler nobody binds, or lists a {@code poison-exceptions} class its
     *     handler cannot load or that is not a Throwable
     */
    public Worker build() {
      List<GuardListener> shared = List.copyOf(sharedGuardListeners);
      Function<String, List<GuardListener>> perSubscription = guardListeners;
      Function<String, List<GuardListener>> listeners =
          shared.isEmpty()
              ? perSubscription
              : id -> {
                List<GuardListener> all = new ArrayList<>(perSubscription.apply(id));
                all.addAll(shared);
                return all;
              };
      return create(config, List.copyOf(plugins), listeners, List.copyOf(dispatchListeners));
    }
  }

  private static Worker create(
      WorkerConfig config,
      List<LoadedPlugin> plugins,
      Function<String, List<GuardListener>> guardListeners,
      List<DispatchListener> dispatchListeners) {
    UnaryOperator<String> keyLogFormat = config.logging().keyFormat().renderer();
    List<ConfigProblem> problems = new ArrayList<>();
    List<Module> modules = new ArrayList<>();
    modules.add(new WorkerModule(config, new LockStoreCalls(Clock.systemUTC())));
    modules.add(LockStoreModules.forConfig(config.lockStore(), config.projectId()));
    for (LoadedPlugin p : plugins) {
      try {
        modules.add(p.plugin().module(p.config()));
      } catch (RuntimeException e) {
        problems.add(
            new ConfigProblem(
                WorkerConfig.ROOT + ".plugins." + p.name(),
                "plugin " + p.name() + " (" + p.source() + ") failed to create its module: " + e,
                ""));
      }
    }
    if (!problems.isEmpty()) {
      throw new InvalidConfigException(problems);
    }
    Injector injector;
    try {
      injector = Guice.createInjector(Stage.DEVELOPMENT, modules);
    } catch (CreationException e) {
      throw new InvalidConfigException(
          e.getErrorMessages().stream().map(Worker::problem).collect(Collectors.toList()));
    }
    Worker worker = new Worker(config, injector, dispatchListeners, keyLogFormat, guardListeners);
    Map<String, MessageHandler> handlers = worker.handlers();
    config.requireHandlers(handlers.keySet());
    // poison-exceptions are loaded by each handler's own class loader (a plugin jar's classes).
    worker.terminalFailures = PoisonExceptions.resolve(config, handlers);
    return worker;
  }

  /**
   * Opens the lock store and Pub/Sub connection, reads every subscription and starts pulling.
   *
   * @throws RuntimeException if a handler cannot be created, the lock store cannot be opened, or a
   *     subscription is missing; nothing is left running
   * @throws IllegalStateException if called twice, or after {@link #stop()}
   */
  public void start() {
    lifecycle.startAsync();
    try {
      lifecycle.awaitRunning();
    } catch (IllegalStateException e) {
      if (lifecycle.state() != Service.State.FAILED) {
        return; // a stop began during the start (say, a subscriber failed): failure() says why
      }
      Throwable cause = lifecycle.failureCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  private void open() {
    // While it runs, this worker's secrets stay masked even if another config is read meanwhile.
    secrets = KnownSecrets.keep(config);
    log.info(
        "starting: opening the lock store ({}) and reading {} subscription(s)",
        config.lockStore().type(),
        config.subscriptions().size());
    Map<String, MessageHandler> handlers = handlers();
    try {
      // The guards' store calls are tracked, so that liveness sees threads stuck in the store.
      guards =
          SubscriptionGuards.create(
              config.orderedSubscriptions(),
              lockStoreCalls().track(backend()),
              guardListeners,
              keyLogFormat);
      checkNotAborted();
      connection =
          PubSubConnection.create(config.pubsubEmulatorHost(), List.of(streams.interceptor()));
      subscriptions =
          SubscriptionSet.start(
              config,
              handlers,
              guards.bySubscription(),
              dispatchListeners,
              connection,
              streams,
              terminalFailures,
              this::onFailure,
              () -> startAborted);
    } catch (RuntimeException e) {
      closeResources();
      if (startAborted) {
        // Whatever the step in progress failed with, the start ended because a stop asked it to.
        CancellationException aborted =
            new CancellationException("the start was stopped before every subscriber pulled");
        aborted.initCause(e);
        throw aborted;
      }
      throw e;
    }
    log.info(
        "worker started: {} subscription(s), lock store {}",
        config.subscriptions().size(),
        config.lockStore().type());
  }

  /**
   * Stops gracefully (see {@link SubscriptionSet} for each step): no delivery starts from now on
   * and those waiting for a handler thread are nacked, pulling stops, running handlers get {@code
   * shutdown-grace}, the rest are abandoned (claim released, interrupted, nacked); then the clients
   * and the lock store are closed. Returns within {@code shutdown-grace} + {@link #STOP_BOUND}
   * (plus the idle lock store's own close). Idempotent; concurrent callers wait for the first.
   *
   * <p>During {@link #start()}, the start ends first: no further step begins (no subscription is
   * read, no subscriber started), a Pub/Sub admin call in progress is cancelled, another step in
   * progress (opening the lock store) ends within its own timeout, and {@link #start()} throws a
   * {@link CancellationException} once what it opened is closed.
   */
  public void stop() {
    if (lifecycle.state() == Service.State.STARTING) {
      abortStart();
    }
    lifecycle.stopAsync();
    try {
      lifecycle.awaitTerminated();
    } catch (IllegalStateException e) {
      // FAILED: the start failed (and closed what it opened) or the stop threw; the stopping
      // thread logged it.
      log.debug("the worker's lifecycle failed", e);
    }
  }

  /** Blocks until the worker has stopped (or its start failed). */
  public void awaitStopped() {
    try {
      lifecycle.awaitTerminated();
    } catch (IllegalStateException e) {
      log.debug("the worker's lifecycle failed", e);
    }
  }

  /**
   * The worker's lifecycle as a Guava service, for composing it with others (a {@code
   * ServiceManager}, listeners): {@code startAsync()} is {@link #start()} without waiting, {@code
   * stopAsync()} is {@link #stop()} without waiting; the service fails if the start fails.
   */
  public Service service() {
    return lifecycle;
  }

  private void beginStop() {
    for (Runnable r : onStop) {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("a stop action failed; stopping anyway", e);
      }
    }
  }

  private void stopSubscriptions() {
    try {
      beginStop();
      SubscriptionSet subs = subscriptions;
      if (subs != null) {
        log.info(
            "stopping: no delivery starts from now on; running handlers get up to {}",
            DurationText.of(config.shutdownGrace()));
        SubscriptionSet.StopSummary s = subs.stop(config.shutdownGrace());
        log.info(
            "worker stopped: {} handler(s) were running at the stop, {} finished within the grace,"
                + " {} abandoned (interrupted, nacked; {} claim(s) released); {} delivery(ies)"
                + " nacked without running",
            s.runningAtStop(),
            s.finishedInGrace(),
            s.abandoned(),
            s.released(),
            s.refused());
      }
    } finally {
      closeResources();
    }
  }

  /**
   * A stop during the start: no further step begins (no more subscriptions read, no subscriber
   * started), and the start's thread is interrupted, which cancels a Pub/Sub admin call in
   * progress. A step that is not one (opening the lock store) ends within its own timeout. The
   * start then fails with a {@link CancellationException}, having closed what it opened.
   */
  private void abortStart() {
    startAborted = true;
    Thread t = startThread;
    if (t != null) {
      t.interrupt(); // ends a Pub/Sub admin call in progress (AdminCalls)
    }
  }

  private static boolean isAbort(Throwable failure) {
    return failure instanceof CancellationException;
  }

  private void checkNotAborted() {
    if (startAborted) {
      throw new CancellationException("the start was stopped before every subscriber pulled");
    }
  }

  /** Whether every subscription is pulling and the worker is not stopping. */
  public boolean isReady() {
    SubscriptionSet subs = subscriptions;
    return subs != null && !isStopping() && subs.allRunning();
  }

  /**
   * Runs {@code action} when a stop begins, before the subscriptions stop and before anything is
   * closed: for what must not touch the lock store or Pub/Sub once they close (the readiness
   * probe). Actions run in registration order on the worker's stop thread; one that throws is
   * logged. Register before {@link #start()}.
   */
  public void onStop(Runnable action) {
    onStop.add(action);
  }

  /**
   * Why some subscription's streaming pull is down, one line per subscription; empty while every
   * stream is up (or reconnecting within {@code observability.pubsub-stream-settle-time}; see
   * {@link StreamHealth}).
   */
  public List<String> pubsubProblems() {
    return streams.problems();
  }

  /**
   * The delivery in progress on a handler thread the longest, of any subscription; empty before the
   * start and while none is.
   */
  public Optional<RunningHandler> oldestHandler() {
    SubscriptionSet subs = subscriptions;
    return subs == null ? Optional.empty() : subs.oldestHandler();
  }

  /**
   * Whether a stop has begun (by {@link #stop()}, a signal, or a subscriber's failure), or the
   * start failed.
   */
  public boolean isStopping() {
    return lifecycle.state().compareTo(Service.State.STOPPING) >= 0;
  }

  /** Why the worker stopped on its own, if it did. */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure.get());
  }

  /**
   * Redrives dead letters as {@code request} says ({@link DeadLetterRedrive}): reads the
   * dead-letter subscription and processes each letter as the configured subscription would, with
   * its own guard on this worker's lock store (or, with {@link RedriveRequest#republish()},
   * publishes each back to a topic). Needs no {@link #start()}: it opens its own Pub/Sub connection
   * and closes it before returning; the lock store stays open until {@link #stop()}. {@link
   * RedriveRequest#forget()} deletes DONE records without asking: a caller that acts for a person
   * asks first, as the {@code redrive} command does.
   *
   * @param registry where the redrive's counters go ({@link DeadLetterRedrive#METRIC}), if anywhere
   * @param report receives one line per letter of a dry run
   * @throws IllegalArgumentException if the subscription is not configured, or no dead-letter
   *     subscription is named
   * @throws SubscriptionUnavailableException if the dead-letter subscription cannot be read, or
   *     (republishing without a topic) the subscription whose topic it needs
   */
  public RedriveSummary redrive(
      RedriveRequest request, Optional<MeterRegistry> registry, Consumer<String> report) {
    SubscriptionConfig s = config.subscriptions().get(request.subscriptionId());
    if (s == null) {
      throw new IllegalArgumentException(
          "no subscription '"
              + request.subscriptionId()
              + "' in the config (configured: "
              + String.join(", ", config.subscriptions().keySet())
              + ")");
    }
    DeadLetterRedrive.source(config, s, request); // names a missing --from before any I/O
    KnownSecrets.Held held = KnownSecrets.keep(config); // masked in every line meanwhile
    try (SubscriptionGuards g =
            SubscriptionGuards.create(
                List.of(s), lockStoreCalls().track(backend()), guardListeners, keyLogFormat);
        PubSubConnection c = PubSubConnection.create(config.pubsubEmulatorHost())) {
      return new DeadLetterRedrive(
              config,
              s,
              handlers().get(s.handler()),
              g.bySubscription().get(s.id()),
              admin(),
              terminalFailures.getOrDefault(s.id(), TerminalFailures.poisonOnly()),
              c,
              dispatchListeners,
              registry,
              report)
          .run(request);
    } finally {
      held.close();
    }
  }

  /** The lock store (opened on first use). */
  public LockBackend backend() {
    return injector.getInstance(LockBackend.class);
  }

  /** The guard's lock-store calls in progress (what liveness watches for stuck threads). */
  @InternalApi("the calls liveness watches")
  public LockStoreCalls lockStoreCalls() {
    return injector.getInstance(LockStoreCalls.class);
  }

  /** The lock store's admin view. */
  public LockAdmin admin() {
    return injector.getInstance(LockAdmin.class);
  }

  /** The running subscriptions, once started. */
  @InternalApi("the running subscribers, for the runtime's health and tests")
  public Optional<SubscriptionSet> subscriptions() {
    return Optional.ofNullable(subscriptions);
  }

  /** The injector, for plugins' and tools' lookups. */
  public Injector injector() {
    return injector;
  }

  private Map<String, MessageHandler> handlers() {
    return injector.getInstance(Key.get(new TypeLiteral<Map<String, MessageHandler>>() {}));
  }

  private void onFailure(Throwable t) {
    if (failure.compareAndSet(null, t)) {
      lifecycle.stopAsync(); // the stop runs on the lifecycle's own thread
    }
  }

  private void closeResources() {
    SubscriptionGuards g = guards;
    if (g != null) {
      g.close();
    }
    injector.getInstance(OpenResources.class).close();
    PubSubConnection c = connection;
    if (c != null) {
      c.close();
    }
    KnownSecrets.Held s = secrets;
    if (s != null) {
      s.close();
    }
  }

  /** Start and stop on a daemon thread of their own (a subscriber's failure stops from one). */
  private final class Lifecycle extends AbstractIdleService {
    @Override
    protected void startUp() {
      startThread = Thread.currentThread();
      try {
        open();
      } finally {
        startThread = null;
      }
    }

    @Override
    protected void shutDown() {
      stopSubscriptions();
    }

    @Override
    protected Executor executor() {
      return command -> {
        Thread t = new Thread(command, "pubsub-worker-" + state().name().toLowerCase(Locale.ROOT));
        t.setDaemon(true);
        t.start();
      };
    }

    @Override
    protected String serviceName() {
      return "pubsub-worker";
    }
  }

  /** One line per injector error, with the sources Guice names (e.g. both duplicate bindings). */
  private static ConfigProblem problem(Message m) {
    String text = m.getMessage();
    ErrorDetail<?> detail = m.getErrorDetail();
    if (detail != null) {
      StringBuilder sb = new StringBuilder();
      try (Formatter f = new Formatter(sb)) {
        detail.format(0, List.of(), f);
      }
      text = sb.toString();
    }
    return new ConfigProblem(
        WorkerConfig.ROOT + ".plugins", text.replaceAll("\\s+", " ").trim(), "");
  }
}
