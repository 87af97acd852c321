package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.DeadLetterRedrive;
import dev.pubsubworker.runtime.pubsub.RedriveRequest;
import dev.pubsubworker.runtime.pubsub.RedriveSummary;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * Redrive end to end on the embedded Pub/Sub server with a Redis lock store and the real worker: 20
 * poison messages land on the dead-letter topic; once the handler is fixed a redrive runs each
 * exactly once; the same letters republished are duplicates; the messages of another subscription
 * on the same topic never run again; a dry run changes nothing; letters that fail again stay on the
 * dead-letter subscription and nothing is lost. With a message-id key and with a business key.
 */
class RedriveEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int MESSAGES = 20;

  /** What the handler of subscription {@code test} does. */
  private enum Mode {
    POISON,
    FIXED_BUT_TWO,
    FIXED
  }

  private final PubSubEmulator pubsub = TestPubSub.embedded();
  private final List<Worker> workers = new ArrayList<>();
  private volatile Mode mode = Mode.POISON;
  private final AtomicInteger calls = new AtomicInteger();
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> otherEffects = new ConcurrentHashMap<>();
  private final AtomicInteger otherCalls = new AtomicInteger();

  private final ch.qos.logback.classic.Logger pubsubLogger =
      (ch.qos.logback.classic.Logger) LoggerFactory.getLogger("dev.pubsubworker");
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeEach
  void capture() {
    log.start();
    pubsubLogger.addAppender(log);
  }

  @AfterEach
  void stop() {
    pubsubLogger.detachAppender(log);
    workers.forEach(Worker::stop);
  }

  private final MessageHandler test =
      (InboundMessage m, dev.pubsubworker.api.HandlerContext ctx) -> {
        calls.incrementAndGet();
        String id = m.attribute("id").orElseThrow();
        switch (mode) {
          case POISON -> throw new PoisonMessageException("order " + id + " cannot be placed");
          case FIXED_BUT_TWO -> {
            if (id.equals("po-19")) {
              throw new IllegalStateException("the supplier is still down");
            }
            if (id.equals("po-20")) {
              throw new PoisonMessageException("order po-20 is still unplaceable");
            }
          }
          case FIXED -> {}
        }
        effects.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      };

  private final MessageHandler other =
      (InboundMessage m, dev.pubsubworker.api.HandlerContext ctx) -> {
        otherCalls.incrementAndGet();
        otherEffects
            .computeIfAbsent(m.attribute("id").orElseThrow(), k -> new AtomicInteger())
            .incrementAndGet();
      };

  private Worker worker(String key, SubscriptionFixture f, SubscriptionName otherSub) {
    String hocon =
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 10s
          lock-store { type = redis, redis { uri = "%s", key-prefix = "%s:" } }
          subscriptions {
            test {
              name = "%s"
              handler = "test"
              key = "%s"
              dead-letter-subscription = "%s"
            }
            other {
              name = "%s"
              handler = "other"
              key = "%s"
              dead-letter-topic = "%s"
            }
          }
        }
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                TestServices.redis().uri(),
                TestServices.uniqueName("redrive"),
                f.subscription().getSubscription(),
                key,
                f.requireDeadLetterSubscription().getSubscription(),
                otherSub.getSubscription(),
                key,
                f.deadLetterTopic().orElseThrow().toString());
    WorkerConfig config =
        WorkerConfig.load(
            ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    WorkerPlugin plugin =
        new WorkerPlugin() {
          @Override
          public String name() {
            return "test";
          }

          @Override
          public com.google.inject.Module module(com.typesafe.config.Config c) {
            return binder -> {
              Handlers.bind(binder, "test").toInstance(test);
              Handlers.bind(binder, "other").toInstance(other);
            };
          }
        };
    Worker w =
        Worker.newBuilder(config)
            .plugins(List.of(new LoadedPlugin(plugin, "test", ConfigFactory.empty())))
            .dispatchListeners(List.of(outcomes))
            .build();
    workers.add(w);
    return w;
  }

  private final OutcomeRecorder outcomes = new OutcomeRecorder();

  private SubscriptionName subscribe(TopicName topic, String prefix) {
    SubscriptionName s = SubscriptionName.of(pubsub.projectId(), TestServices.uniqueName(prefix));
    pubsub
        .subscriptionAdmin()
        .createSubscription(
            Subscription.newBuilder()
                .setName(s.toString())
                .setTopic(topic.toString())
                .setAckDeadlineSeconds(10)
                .build());
    return s;
  }

  private static RedriveRequest request(String subscription, boolean dryRun) {
    return RedriveRequest.builder(subscription).max(100).dryRun(dryRun).build();
  }

  private static double counter(MeterRegistry r, String result) {
    var c =
        r.find(DeadLetterRedrive.METRIC)
            .tag("subscription", "test")
            .tag("result", result)
            .counter();
    return c == null ? 0 : c.count();
  }

  /** Each key's record as state, fence and claim token (what a claim would change). */
  private static Map<String, String> records(Worker worker, List<String> keys) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    for (String k : keys) {
      out.put(
          k,
          worker
              .admin()
              .inspect(k)
              .map(r -> r.state() + " fence " + r.fence() + " " + r.claimToken())
              .orElse("absent"));
    }
    return out;
  }

  /**
   * Takes the {@link #MESSAGES} copies of the dead letters that {@code copies} kept and publishes
   * them to {@code topic} again, as a person moving letters by hand would.
   */
  private void republishCopies(SubscriptionName copies, TopicName topic) {
    List<ReceivedMessage> kept = new CopyOnWriteArrayList<>();
    Set<String> keptIds = ConcurrentHashMap.newKeySet();
    await()
        .atMost(WAIT)
        .until(
            () -> {
              List<ReceivedMessage> batch = pubsub.pull(copies, 100, Duration.ofSeconds(2));
              for (ReceivedMessage m : batch) {
                if (keptIds.add(m.getMessage().getMessageId())) {
                  kept.add(m);
                }
              }
              pubsub.acknowledge(copies, batch.stream().map(ReceivedMessage::getAckId).toList());
              return kept.size() >= MESSAGES;
            });
    for (ReceivedMessage m : kept) {
      pubsub.publish(topic, m.getMessage().toBuilder().clearMessageId().clearPublishTime().build());
    }
  }

  /** Publishes the {@link #MESSAGES} orders po-1.. to {@code topic}; their keys as stored. */
  private List<String> publishOrders(TopicName topic, String key) {
    List<String> storedKeys = new ArrayList<>();
    for (int i = 1; i <= MESSAGES; i++) {
      String messageId =
          pubsub.publish(
              topic,
              PubsubMessage.newBuilder()
                  .setData(ByteString.copyFrom("order " + i, StandardCharsets.UTF_8))
                  .putAttributes("id", "po-" + i)
                  .build());
      storedKeys.add("test:" + (key.equals("message-id") ? messageId : "po-" + i));
    }
    return storedKeys;
  }

  /** Subscription {@code test} with every order poisoned once, and what the test needs of it. */
  private record Poisoned(
      SubscriptionFixture fixture,
      SubscriptionName copies,
      Worker worker,
      List<String> storedKeys) {}

  /**
   * Subscriptions {@code test} and {@code other} on one topic, a worker running both, and the
   * {@link #MESSAGES} orders published: every message of {@code test} is dead-lettered after one
   * attempt (poison), {@code other} runs them all. A second reader of the dead-letter topic, {@code
   * copies}, keeps a copy of every letter, to publish again later.
   */
  private Poisoned poisoned(String key) {
    SubscriptionFixture f =
        pubsub.createSubscription(SubscriptionSpec.newBuilder().setDeadLetterPolicy(5).build());
    SubscriptionName otherSub = subscribe(f.topic(), "other");
    SubscriptionName copies = subscribe(f.deadLetterTopic().orElseThrow(), "copies");
    Worker worker = worker(key, f, otherSub);
    worker.start();
    List<String> storedKeys = publishOrders(f.topic(), key);
    await()
        .atMost(WAIT)
        .until(
            () ->
                outcomes.count(Outcome.DEAD_LETTERED) == MESSAGES
                    && outcomes.count(Outcome.PROCESSED) == MESSAGES);
    assertThat(calls.get()).isEqualTo(MESSAGES);
    assertThat(effects).isEmpty();
    assertThat(otherEffects).hasSize(MESSAGES);
    return new Poisoned(f, copies, worker, storedKeys);
  }

  @ParameterizedTest(name = "key = {0}")
  @ValueSource(strings = {"message-id", "attribute:id"})
  void dead_letters_are_redriven_exactly_once_as_their_subscription_would_and_nothing_is_lost(
      String key) {
    Poisoned p = poisoned(key);
    SubscriptionFixture f = p.fixture();
    SubscriptionName copies = p.copies();
    Worker worker = p.worker();
    List<String> storedKeys = p.storedKeys();

    // 2. A dry run: reports 20 would run, and changes nothing.
    Map<String, String> records = records(worker, storedKeys);
    assertThat(records.values()).allSatisfy(r -> assertThat(r).isEqualTo("CLAIMED fence 2 null"));
    List<String> lines = new CopyOnWriteArrayList<>();
    RedriveSummary dry = worker.redrive(request("test", true), Optional.empty(), lines::add);
    assertThat(dry.read()).isEqualTo(MESSAGES);
    assertThat(dry.redriven()).isEqualTo(MESSAGES);
    assertThat(dry.duplicates()).isZero();
    assertThat(lines).hasSize(MESSAGES).allSatisfy(l -> assertThat(l).endsWith(": would run"));
    assertThat(calls.get()).isEqualTo(MESSAGES);
    assertThat(records(worker, storedKeys)).isEqualTo(records); // no claim

    // 3. Fixed, but for two: 18 redriven, po-19 fails again, po-20 fails terminally again.
    mode = Mode.FIXED_BUT_TWO;
    MeterRegistry registry = new SimpleMeterRegistry();
    RedriveSummary first = worker.redrive(request("test", false), Optional.of(registry), l -> {});
    assertThat(first.read()).isEqualTo(MESSAGES);
    assertThat(first.redriven()).isEqualTo(MESSAGES - 2);
    assertThat(first.failedAgain()).isEqualTo(2);
    assertThat(first.terminal()).isEqualTo(1);
    assertThat(first.duplicates()).isZero();
    assertThat(first.allDone()).isFalse();
    assertThat(first.line())
        .isEqualTo(
            "redrive of test from "
                + f.requireDeadLetterSubscription()
                + ": 20 read, 18 redriven, 0 duplicate(s), 2 failed again (1 terminal), 0 left");
    assertThat(counter(registry, DeadLetterRedrive.REDRIVEN)).isEqualTo(MESSAGES - 2);
    assertThat(counter(registry, DeadLetterRedrive.FAILED_AGAIN)).isEqualTo(2);
    assertThat(effects).hasSize(MESSAGES - 2).doesNotContainKeys("po-19", "po-20");
    // The terminal one is not said to be dead-lettered or acked: it stays where it is.
    assertThat(log.list)
        .map(ILoggingEvent::getFormattedMessage)
        .filteredOn(l -> l.contains("order po-20 is still unplaceable"))
        .singleElement()
        .asString()
        .contains(
            "by the redrive, which leaves it on "
                + f.requireDeadLetterSubscription()
                + ", not published")
        .contains("kept after attempt")
        .doesNotContain("acked");

    // 4. Fully fixed: the two that stayed are there, nothing lost, and run once.
    mode = Mode.FIXED;
    RedriveSummary second = worker.redrive(request("test", false), Optional.empty(), l -> {});
    assertThat(second.read()).isEqualTo(2);
    assertThat(second.redriven()).isEqualTo(2);
    assertThat(second.allDone()).isTrue();
    assertThat(effects).hasSize(MESSAGES).allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));
    assertThat(worker.redrive(request("test", false), Optional.empty(), l -> {}).read()).isZero();

    // 5. The same letters republished to the dead-letter topic run nothing: duplicates.
    republishCopies(copies, f.deadLetterTopic().orElseThrow());
    int before = calls.get();
    RedriveSummary dryDuplicates = worker.redrive(request("test", true), Optional.empty(), l -> {});
    assertThat(dryDuplicates.duplicates()).isEqualTo(MESSAGES);
    assertThat(dryDuplicates.redriven()).isZero();
    // As the other subscription: every letter names `test` as its source, so all stay...
    String from = f.requireDeadLetterSubscription().toString();
    RedriveSummary asOther =
        worker.redrive(
            RedriveRequest.builder("other").from(from).max(100).build(), Optional.empty(), l -> {});
    assertThat(asOther.left()).isEqualTo(MESSAGES);
    assertThat(asOther.redriven() + asOther.duplicates() + asOther.failedAgain()).isZero();
    // ... and taken anyway, they are the other subscription's own keys, DONE: never run again.
    RedriveSummary asOtherAnySource =
        worker.redrive(
            RedriveRequest.builder("other")
                .from(from)
                .max(100)
                .dryRun(true)
                .anySource(true)
                .build(),
            Optional.empty(),
            l -> {});
    assertThat(asOtherAnySource.duplicates()).isEqualTo(MESSAGES);
    // A filter no letter matches leaves every one.
    RedriveSummary filtered =
        worker.redrive(
            RedriveRequest.builder("test").from(from).max(100).filter("id", "po-none").build(),
            Optional.empty(),
            l -> {});
    assertThat(filtered.left()).isEqualTo(MESSAGES);
    RedriveSummary again = worker.redrive(request("test", false), Optional.of(registry), l -> {});
    assertThat(again.read()).isEqualTo(MESSAGES);
    assertThat(again.duplicates()).isEqualTo(MESSAGES);
    assertThat(again.redriven()).isZero();
    assertThat(counter(registry, DeadLetterRedrive.DUPLICATE)).isEqualTo(MESSAGES);
    assertThat(calls.get()).isEqualTo(before);
    assertThat(effects).hasSize(MESSAGES).allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));

    // 6. The other subscription's messages never ran again, and nothing is left anywhere.
    assertThat(otherCalls.get()).isEqualTo(MESSAGES);
    assertThat(otherEffects)
        .hasSize(MESSAGES)
        .allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));
    assertThat(pubsub.pull(f.requireDeadLetterSubscription(), 100, Duration.ofSeconds(2)))
        .isEmpty();
  }

  @ParameterizedTest(name = "key = {0}")
  @ValueSource(strings = {"message-id", "attribute:id"})
  void republished_letters_run_again_only_where_they_failed_and_forget_reruns_done_keys(
      String key) {
    Poisoned p = poisoned(key);
    SubscriptionFixture f = p.fixture();
    SubscriptionName copies = p.copies();
    Worker worker = p.worker();
    List<String> storedKeys = p.storedKeys();

    // 1. A dry run of --republish publishes nothing and acks nothing.
    List<String> lines = new CopyOnWriteArrayList<>();
    RedriveSummary dry =
        worker.redrive(
            RedriveRequest.builder("test").max(100).dryRun(true).republish().build(),
            Optional.empty(),
            lines::add);
    assertThat(dry.topic()).contains(f.topic().toString());
    assertThat(dry.redriven()).isEqualTo(MESSAGES);
    assertThat(lines)
        .hasSize(MESSAGES)
        .allSatisfy(l -> assertThat(l).endsWith(": would be republished to " + f.topic()));

    // 2. Fixed, and republished to the topic: both subscriptions receive every message again;
    // `test` runs each once (its keys were released when they failed), `other`, whose keys are
    // DONE, runs none: the original message id travels with the republished message.
    mode = Mode.FIXED;
    MeterRegistry registry = new SimpleMeterRegistry();
    RedriveSummary republished =
        worker.redrive(
            RedriveRequest.builder("test").max(100).republish().build(),
            Optional.of(registry),
            l -> {});
    assertThat(republished.read()).isEqualTo(MESSAGES);
    assertThat(republished.redriven()).isEqualTo(MESSAGES);
    assertThat(republished.failedAgain()).isZero();
    assertThat(counter(registry, DeadLetterRedrive.REPUBLISHED)).isEqualTo(MESSAGES);
    await()
        .atMost(WAIT)
        .until(
            () ->
                outcomes.count(Outcome.PROCESSED) == 2 * MESSAGES
                    && outcomes.count(Outcome.DUPLICATE) == MESSAGES);
    assertThat(effects).hasSize(MESSAGES).allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));
    assertThat(otherCalls.get()).isEqualTo(MESSAGES);
    assertThat(records(worker, storedKeys).values())
        .allSatisfy(r -> assertThat(r).startsWith("DONE"));
    // Every letter was acked on the dead-letter subscription.
    assertThat(worker.redrive(request("test", true), Optional.empty(), l -> {}).read()).isZero();

    // 3. The same letters moved back onto the dead-letter topic are duplicates now; --forget
    // deletes each DONE record first, and every one runs a second time (a deliberate re-run),
    // for `test` only.
    republishCopies(copies, f.deadLetterTopic().orElseThrow());
    RedriveSummary dryForget =
        worker.redrive(
            RedriveRequest.builder("test").max(100).dryRun(true).forget(true).build(),
            Optional.empty(),
            l -> {});
    assertThat(dryForget.redriven()).isEqualTo(MESSAGES);
    assertThat(dryForget.forgotten()).isEqualTo(MESSAGES);
    assertThat(records(worker, storedKeys).values())
        .allSatisfy(r -> assertThat(r).startsWith("DONE")); // nothing forgotten
    RedriveSummary forgot =
        worker.redrive(
            RedriveRequest.builder("test").max(100).forget(true).build(),
            Optional.empty(),
            l -> {});
    assertThat(forgot.read()).isEqualTo(MESSAGES);
    assertThat(forgot.redriven()).isEqualTo(MESSAGES);
    assertThat(forgot.forgotten()).isEqualTo(MESSAGES);
    assertThat(forgot.duplicates()).isZero();
    assertThat(effects).hasSize(MESSAGES).allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(2));
    assertThat(otherCalls.get()).isEqualTo(MESSAGES);
    assertThat(otherEffects)
        .hasSize(MESSAGES)
        .allSatisfy((id, n) -> assertThat(n.get()).isEqualTo(1));
    assertThat(pubsub.pull(f.requireDeadLetterSubscription(), 100, Duration.ofSeconds(2)))
        .isEmpty();
  }
}
