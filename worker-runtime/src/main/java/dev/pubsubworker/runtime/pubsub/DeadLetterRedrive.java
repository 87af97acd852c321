package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import com.google.api.gax.grpc.GrpcCallContext;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.DeadlineExceededException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.api.gax.rpc.PermissionDeniedException;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.ModifyAckDeadlineRequest;
import com.google.pubsub.v1.PublishRequest;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.pubsub.DeadLetterAttributes;
import dev.pubsubworker.pubsub.DeadLetterPublisher;
import dev.pubsubworker.pubsub.DeliveryObserver;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.pubsub.InboundMessages;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.pubsub.TerminalFailures;
import dev.pubsubworker.runtime.config.GuardMode;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redrives dead letters: reads a dead-letter subscription with synchronous pulls (bounded by {@link
 * RedriveRequest#max()}) and processes each letter as the configured subscription would, through
 * the engine's own {@link GuardedReceiver} built from that subscription's settings — its handler,
 * guard mode, key, key namespace, lease, ttl and terminal failures. So the outcome of each letter
 * is the engine's, and its reply on the dead-letter subscription follows from it:
 *
 * <ul>
 *   <li>the handler ran and DONE was written ({@code processed}, also after waiting for a held key)
 *       → acked: <b>redriven</b>;
 *   <li>the key was already DONE ({@code duplicate}) → acked without running: <b>duplicate</b>;
 *   <li>anything that nacks (the handler threw, the store failed, the key stayed held) or a
 *       terminal failure again → nacked, left on the dead-letter subscription: <b>failed again</b>
 *       (terminal ones counted apart). A terminal failure is not published anywhere: the letter
 *       stays where it is.
 * </ul>
 *
 * <p>The handler sees the original message ({@link DeadLetterAttributes#original}): its data,
 * attributes and ordering key, its original message id and publish time. A {@code message-id} key
 * therefore resolves to the original message id ({@link DeadLetterAttributes#MESSAGE_ID}), so a
 * message that ran before it was dead-lettered is a duplicate; a letter without that attribute
 * (Pub/Sub's own forwarding gives the letter a new id and keeps the original one nowhere) uses the
 * letter's own message id, which no earlier run can have claimed. A business key (attribute,
 * template) resolves to itself.
 *
 * <p>Letters that name another subscription as their source are left where they are, unless {@link
 * RedriveRequest#anySource()}: a shared dead-letter topic's letters go back only to their own
 * subscription. A dry run claims nothing, runs nothing and acks nothing: each letter's key is
 * looked up in the lock store ({@link LockAdmin#inspect}) and reported as "would run", "duplicate",
 * "held" or "no key"; every letter is nacked back. Letters are handled one at a time, on the
 * calling thread.
 *
 * <p>{@link RedriveRequest#forget()}: before a letter is processed, its key's record is deleted
 * when it is DONE (guard = lock), so the letter runs again: a deliberate re-run, counted as
 * forgotten. A held key is never forgotten.
 *
 * <p>{@link RedriveRequest#republish()}: nothing is processed here; each letter's original message
 * is published to the topic with its original message id in {@link DeadLetterAttributes#MESSAGE_ID}
 * (so a {@code message-id} key resolves to it again, on every subscription of the topic run by this
 * worker) and its publish time in {@link DeadLetterAttributes#PUBLISH_TIME}; the letter is acked
 * once Pub/Sub accepted the publish and nacked when it refused (failed again). Every subscription
 * of the topic receives the message again: one whose key is DONE skips it as a duplicate, a
 * consumer that is not guarded on this key runs it again.
 */
@InternalApi("what Worker.redrive runs")
public final class DeadLetterRedrive {

  /** The counter of redriven letters, by {@code subscription} and {@code result}. */
  public static final String METRIC = "pubsub.worker.redrive.messages";

  /** The {@code result} tag of a letter that ran and succeeded. */
  public static final String REDRIVEN = "redriven";

  /** The {@code result} tag of a letter whose key was already DONE. */
  public static final String DUPLICATE = "duplicate";

  /** The {@code result} tag of a letter republished to its topic. */
  public static final String REPUBLISHED = "republished";

  /** The {@code result} tag of a letter that failed again. */
  public static final String FAILED_AGAIN = "failed-again";

  /** How long one pull waits for letters before the redrive ends: 5 seconds. */
  static final Duration PULL_WAIT = Duration.ofSeconds(5);

  /** How many pulls in a row that bring no new letter end the redrive. */
  static final int IDLE_PULLS = 3;

  /**
   * The most letters one pull asks for: few, since they are handled one at a time and the last of a
   * batch should not outlive its ack deadline waiting.
   */
  private static final int PULL_BATCH = 10;

  /** The longest one republish may take, the client's retries included. */
  private static final Duration PUBLISH_BOUND = Duration.ofSeconds(30);

  /** The longest one letter may take past the subscription's in-progress-max-wait. */
  private static final Duration RUN_BOUND = Duration.ofMinutes(10);

  private static final Logger log = LoggerFactory.getLogger(DeadLetterRedrive.class);

  private final WorkerConfig config;
  private final SubscriptionConfig subscription;
  private final MessageHandler handler;
  private final IdempotencyGuard guard;
  private final LockAdmin admin;
  private final TerminalFailures terminal;
  private final PubSubConnection connection;
  private final List<DispatchListener> listeners;
  private final Optional<MeterRegistry> registry;
  private final Consumer<String> report;

  /**
   * @param config the worker's settings
   * @param subscription the configured subscription to act as
   * @param handler its handler
   * @param guard its guard
   * @param admin the lock store's admin view (dry runs)
   * @param terminal its terminal failures
   * @param connection how to reach Pub/Sub
   * @param listeners the worker's dispatch listeners (they see the redrive's outcomes too)
   * @param registry where the {@link #METRIC} counters go, if anywhere
   * @param report receives one line per letter of a dry run (its message ids and stored key)
   */
  public DeadLetterRedrive(
      WorkerConfig config,
      SubscriptionConfig subscription,
      MessageHandler handler,
      IdempotencyGuard guard,
      LockAdmin admin,
      TerminalFailures terminal,
      PubSubConnection connection,
      List<DispatchListener> listeners,
      Optional<MeterRegistry> registry,
      Consumer<String> report) {
    this.config = config;
    this.subscription = subscription;
    this.handler = handler;
    this.guard = guard;
    this.admin = admin;
    this.terminal = terminal;
    this.connection = connection;
    this.listeners = List.copyOf(listeners);
    this.registry = registry;
    this.report = report;
  }

  /**
   * The dead-letter subscription {@code request} reads, as a full path.
   *
   * @throws IllegalArgumentException if neither {@code --from} nor the subscription's {@code
   *     dead-letter-subscription} names one
   */
  public static String source(WorkerConfig config, SubscriptionConfig s, RedriveRequest request) {
    return request
        .from()
        .map(f -> SubscriptionProbe.path(config.projectId(), f))
        .or(() -> s.failures().deadLetterSubscription())
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "no dead-letter subscription to read: pass --from DL_SUBSCRIPTION, or set "
                        + WorkerConfig.ROOT
                        + ".subscriptions."
                        + s.id()
                        + ".dead-letter-subscription"));
  }

  /**
   * Runs the redrive: pulls until {@code max} letters were read or {@link #IDLE_PULLS} pulls in a
   * row (each waiting at most {@link #PULL_WAIT}) brought nothing new, and settles each as the
   * class describes. Logs the summary at INFO.
   *
   * @throws SubscriptionUnavailableException if the dead-letter subscription does not exist or
   *     cannot be read
   */
  public RedriveSummary run(RedriveRequest request) {
    String from = source(config, subscription, request);
    Counts counts = new Counts();
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon("timer"));
    timer.setRemoveOnCancelPolicy(true);
    ExecutorService retries = Executors.newSingleThreadExecutor(daemon("retry"));
    AtomicReference<CompletableFuture<Outcome>> current = new AtomicReference<>();
    boolean process = !request.dryRun() && !request.republish();
    GuardedReceiver receiver = process ? receiver(from, current, timer, retries) : null;
    Optional<String> topic = Optional.empty();
    try (SubscriptionAdminClient client =
            SubscriptionAdminClient.create(connection.subscriptionAdminSettings());
        TopicAdminClient topics =
            request.republish() ? TopicAdminClient.create(connection.topicAdminSettings()) : null) {
      Optional<Republish> republish = Optional.empty();
      if (request.republish()) {
        topic = Optional.of(topic(client, request));
        republish = Optional.of(new Republish(topics, topic.get()));
      }
      Set<String> seen = new HashSet<>();
      // Letters to leave are nacked only at the end, so that this run does not read them again.
      List<String> nacks = new ArrayList<>();
      int idle = 0;
      try {
        while (counts.read < request.max()) {
          List<ReceivedMessage> batch =
              pull(client, from, Math.min(PULL_BATCH, request.max() - counts.read));
          boolean anyNew = false;
          for (ReceivedMessage m : batch) {
            if (!seen.add(m.getMessage().getMessageId()) || counts.read >= request.max()) {
              nacks.add(m.getAckId()); // delivered again within this run, or past --max
              continue;
            }
            anyNew = true;
            counts.read++;
            if (settle(m.getMessage(), request, counts, receiver, current, republish)) {
              // At once: the letters after it in the batch may take a while.
              reply(client, from, List.of(m.getAckId()), List.of());
            } else {
              nacks.add(m.getAckId());
            }
          }
          // Pub/Sub may answer a pull with nothing while letters wait: end only after a few.
          idle = anyNew ? 0 : idle + 1;
          if (idle >= IDLE_PULLS) {
            break;
          }
        }
      } finally {
        reply(client, from, List.of(), nacks);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a Pub/Sub client for " + from, e);
    } finally {
      if (receiver != null) {
        receiver.close();
      }
      timer.shutdownNow();
      retries.shutdownNow();
    }
    RedriveSummary summary =
        new RedriveSummary(
            subscription.id(),
            from,
            request.dryRun(),
            topic,
            counts.read,
            counts.redriven,
            counts.duplicates,
            counts.forgotten,
            counts.failedAgain,
            counts.terminal,
            counts.left);
    log.info("{}", summary.line());
    return summary;
  }

  /** Settles one letter; true to ack it on the dead-letter subscription. */
  private boolean settle(
      PubsubMessage letter,
      RedriveRequest request,
      Counts counts,
      GuardedReceiver receiver,
      AtomicReference<CompletableFuture<Outcome>> current,
      Optional<Republish> republish) {
    for (Map.Entry<String, String> f : request.filter().entrySet()) {
      if (!f.getValue().equals(letter.getAttributesOrDefault(f.getKey(), null))) {
        counts.left++;
        return false;
      }
    }
    Optional<String> source = source(letter);
    if (!request.anySource() && source.isPresent() && !source.get().equals(path())) {
      counts.left++;
      if (request.dryRun()) {
        report.accept(
            "dead letter "
                + letter.getMessageId()
                + ": from another subscription ("
                + source.get()
                + "), left (--any-source takes it)");
      }
      return false;
    }
    PubsubMessage original = DeadLetterAttributes.original(letter);
    if (republish.isPresent()) {
      return republish(letter, original, request, counts, republish.get());
    }
    if (request.dryRun()) {
      dryRun(letter, original, request, counts);
      return false;
    }
    if (request.forget() && !forgetIfDone(letter, original, counts)) {
      return false;
    }
    CompletableFuture<Outcome> done = new CompletableFuture<>();
    current.set(done);
    receiver
        .asMessageReceiver()
        .receiveMessage(
            original,
            new AckReplyConsumer() {
              @Override
              public void ack() {}

              @Override
              public void nack() {}
            });
    Outcome outcome;
    try {
      outcome =
          done.get(subscription.failures().inProgressMaxWait().plus(RUN_BOUND).toMillis(), MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      outcome = Outcome.ABANDONED;
    } catch (ExecutionException | TimeoutException e) {
      outcome = Outcome.ABANDONED;
    }
    switch (outcome) {
      case PROCESSED, PARKED_THEN_PROCESSED, UNGUARDED, FENCED_OUT, COMPLETE_FAILED -> {
        counts.redriven++;
        count(REDRIVEN);
        return true;
      }
      case DUPLICATE, PARKED_THEN_DUPLICATE, FENCED_OUT_ROLLED_BACK -> {
        counts.duplicates++;
        count(DUPLICATE);
        return true;
      }
      case DEAD_LETTERED -> {
        counts.failedAgain++;
        counts.terminal++;
        count(FAILED_AGAIN);
        return false;
      }
      default -> {
        counts.failedAgain++;
        count(FAILED_AGAIN);
        return false;
      }
    }
  }

  private static final TimeUnit MILLIS = TimeUnit.MILLISECONDS;

  /** The full path of the subscription this redrive acts as. */
  private String path() {
    return SubscriptionProbe.path(config.projectId(), subscription.name());
  }

  /** The subscription a letter names as its source, as a full path; empty when it names none. */
  private Optional<String> source(PubsubMessage letter) {
    return RedriveReceiver.sourceOf(letter, config.projectId());
  }

  /** What a run would do with {@code original}, from its key's record; changes nothing. */
  private void dryRun(
      PubsubMessage letter, PubsubMessage original, RedriveRequest request, Counts counts) {
    String ids =
        "dead letter " + letter.getMessageId() + " (original " + original.getMessageId() + ")";
    if (subscription.guard().mode() == GuardMode.NONE) {
      counts.redriven++;
      report.accept(ids + ": would run (guard = none)");
      return;
    }
    Optional<String> key =
        SubscriptionReceivers.key(subscription).resolve(InboundMessages.of(original));
    if (key.isEmpty()) {
      if (subscription.guard().allowUnguarded()) {
        counts.redriven++;
        report.accept(ids + ": no key, would run unguarded (allow-unguarded = true)");
      } else {
        counts.failedAgain++;
        counts.terminal++;
        report.accept(ids + ": no key, would fail again (terminal) and stay");
      }
      return;
    }
    String shown = guard.keyLogFormat().apply(key.get());
    Optional<LockRecord> found;
    try {
      found = admin.inspect(key.get());
    } catch (InvalidLockRecordException e) {
      counts.left++;
      report.accept(ids + ", key " + shown + ": its record is unreadable, would be nacked");
      return;
    }
    if (found.isPresent() && !found.get().reclaimable()) {
      if (found.get().state() == LockState.DONE
          && subscription.guard().mode() == GuardMode.LOCK
          && request.forget()) {
        counts.redriven++;
        counts.forgotten++;
        report.accept(
            ids + ", key " + shown + ": DONE, would be forgotten and run again (--forget)");
      } else if (found.get().state() == LockState.DONE
          && subscription.guard().mode() == GuardMode.LOCK) {
        counts.duplicates++;
        report.accept(
            ids + ", key " + shown + ": duplicate (DONE), would be acked without running");
      } else {
        counts.left++;
        report.accept(ids + ", key " + shown + ": held (" + found.get().state() + "), would wait");
      }
      return;
    }
    counts.redriven++;
    report.accept(ids + ", key " + shown + ": would run");
  }

  /**
   * With {@code --forget}: deletes the record of {@code original}'s key when it is DONE (guard =
   * lock), so the letter runs again. A key that is held, absent or not guarded is left as it is.
   * False when the record could not be read or deleted: the letter is then counted as failed again
   * and left (nothing ran).
   */
  private boolean forgetIfDone(PubsubMessage letter, PubsubMessage original, Counts counts) {
    if (subscription.guard().mode() != GuardMode.LOCK) {
      return true; // only lock de-duplicates on DONE
    }
    Optional<String> key =
        SubscriptionReceivers.key(subscription).resolve(InboundMessages.of(original));
    if (key.isEmpty()) {
      return true; // the receiver settles an unkeyed message as it always does
    }
    String shown = guard.keyLogFormat().apply(key.get());
    try {
      Optional<LockRecord> found = admin.inspect(key.get());
      if (found.isEmpty() || found.get().state() != LockState.DONE || found.get().reclaimable()) {
        return true;
      }
      // A DONE record changes only once it expires: between this read and the delete there is no
      // live claim to take away, except at the very end of its ttl.
      admin.forget(key.get());
      counts.forgotten++;
      log.info(
          "redrive --forget: forgot the DONE record of key {} (dead letter {}); it runs again",
          shown,
          letter.getMessageId());
      return true;
    } catch (RuntimeException e) {
      counts.failedAgain++;
      count(FAILED_AGAIN);
      log.warn(
          "redrive --forget: cannot forget key {} (dead letter {}), left on the dead-letter"
              + " subscription: {}",
          shown,
          letter.getMessageId(),
          e.toString());
      return false;
    }
  }

  /**
   * Publishes {@code original} back to the topic, keeping its message id and publish time in
   * attributes; true (ack the letter) once Pub/Sub accepted it. A dry run only reports.
   */
  private boolean republish(
      PubsubMessage letter,
      PubsubMessage original,
      RedriveRequest request,
      Counts counts,
      Republish to) {
    String ids =
        "dead letter " + letter.getMessageId() + " (original " + original.getMessageId() + ")";
    if (request.dryRun()) {
      counts.redriven++;
      report.accept(ids + ": would be republished to " + to.topic());
      return false;
    }
    PubsubMessage message =
        original.toBuilder()
            .clearMessageId()
            .clearPublishTime()
            .putAttributes(DeadLetterAttributes.MESSAGE_ID, original.getMessageId())
            .putAttributes(
                DeadLetterAttributes.PUBLISH_TIME,
                Instant.ofEpochSecond(
                        original.getPublishTime().getSeconds(),
                        original.getPublishTime().getNanos())
                    .toString())
            .build();
    try {
      to.client()
          .publishCallable()
          .call(
              PublishRequest.newBuilder().setTopic(to.topic()).addMessages(message).build(),
              GrpcCallContext.createDefault().withTimeoutDuration(PUBLISH_BOUND));
    } catch (ApiException e) {
      counts.failedAgain++;
      count(FAILED_AGAIN);
      log.warn(
          "redrive --republish: publishing dead letter {} to {} failed ({}), left on the"
              + " dead-letter subscription",
          letter.getMessageId(),
          to.topic(),
          AdminCalls.statusText(e));
      return false;
    }
    counts.redriven++;
    count(REPUBLISHED);
    return true;
  }

  /**
   * The topic {@code --republish} publishes to: {@code --topic}, else the topic of the subscription
   * this redrive acts as.
   *
   * @throws SubscriptionUnavailableException if that subscription cannot be read
   */
  private String topic(SubscriptionAdminClient client, RedriveRequest request) {
    if (request.topic().isPresent()) {
      String t = request.topic().get();
      return t.startsWith("projects/") ? t : TopicName.format(config.projectId(), t);
    }
    try {
      return client.getSubscription(path()).getTopic();
    } catch (NotFoundException e) {
      throw new SubscriptionUnavailableException(
          "subscription " + path() + " does not exist: pass --topic to name the topic", e);
    } catch (ApiException e) {
      throw new SubscriptionUnavailableException(
          "cannot read subscription "
              + path()
              + " to find its topic ("
              + AdminCalls.statusText(e)
              + "): pass --topic, or grant pubsub.subscriptions.get",
          e);
    }
  }

  /** Where {@code --republish} publishes. */
  private record Republish(TopicAdminClient client, String topic) {}

  /**
   * The engine's receiver for the subscription, whose settled outcomes complete {@code current}.
   */
  private GuardedReceiver receiver(
      String from,
      AtomicReference<CompletableFuture<Outcome>> current,
      ScheduledThreadPoolExecutor timer,
      ExecutorService retries) {
    List<DispatchListener> all = new ArrayList<>(listeners);
    all.add(
        new DispatchListener() {
          @Override
          public DeliveryObserver deliveryStarted(String s, PubsubMessage message) {
            CompletableFuture<Outcome> done = current.get();
            return new DeliveryObserver() {
              @Override
              public void settled(Outcome outcome) {
                done.complete(outcome);
              }
            };
          }
        });
    return SubscriptionReceivers.build(
        subscription,
        new SubscriptionFacts(path(), false, Optional.empty(), 0, 0, false, false),
        handler,
        guard,
        all,
        terminal,
        Optional.of(new LeaveOnSubscription(from)),
        config.workerId(),
        timer,
        retries);
  }

  /**
   * The redrive's "dead-letter topic": a terminal failure is not published anywhere, it stays on
   * the dead-letter subscription it came from (the redrive nacks it there).
   */
  private record LeaveOnSubscription(String from) implements DeadLetterPublisher {
    @Override
    public String topic() {
      return "the redrive, which leaves it on " + from;
    }

    @Override
    public String publish(PubsubMessage letter) {
      return ""; // kept: the redrive nacks it on the dead-letter subscription
    }
  }

  private List<ReceivedMessage> pull(SubscriptionAdminClient client, String from, int max) {
    try {
      return client
          .pullCallable()
          .call(
              PullRequest.newBuilder().setSubscription(from).setMaxMessages(max).build(),
              GrpcCallContext.createDefault().withTimeoutDuration(PULL_WAIT))
          .getReceivedMessagesList();
    } catch (DeadlineExceededException e) {
      return List.of();
    } catch (NotFoundException e) {
      throw new SubscriptionUnavailableException(
          "dead-letter subscription " + from + " does not exist", e);
    } catch (PermissionDeniedException e) {
      throw new SubscriptionUnavailableException(
          "dead-letter subscription "
              + from
              + ": permission denied (needs roles/pubsub.subscriber)",
          e);
    } catch (ApiException e) {
      throw new SubscriptionUnavailableException(
          "dead-letter subscription " + from + " cannot be pulled (" + e.getStatusCode() + ")", e);
    }
  }

  private static void reply(
      SubscriptionAdminClient client, String from, List<String> acks, List<String> nacks) {
    if (!acks.isEmpty()) {
      client
          .acknowledgeCallable()
          .call(AcknowledgeRequest.newBuilder().setSubscription(from).addAllAckIds(acks).build());
    }
    if (!nacks.isEmpty()) {
      client
          .modifyAckDeadlineCallable()
          .call(
              ModifyAckDeadlineRequest.newBuilder()
                  .setSubscription(from)
                  .addAllAckIds(nacks)
                  .setAckDeadlineSeconds(0)
                  .build());
    }
  }

  private void count(String result) {
    registry.ifPresent(
        r ->
            Counter.builder(METRIC)
                .description("Dead letters redriven, by result")
                .tag("subscription", subscription.id())
                .tag("result", result)
                .register(r)
                .increment());
  }

  private java.util.concurrent.ThreadFactory daemon(String what) {
    return r -> {
      Thread t = new Thread(r, "pubsub-worker-redrive-" + what + "-" + subscription.id());
      t.setDaemon(true);
      return t;
    };
  }

  private static final class Counts {
    int read;
    int redriven;
    int duplicates;
    int forgotten;
    int failedAgain;
    int terminal;
    int left;
  }
}
