package dev.pubsubworker.runtime.e2e;

import com.google.inject.Module;
import com.typesafe.config.Config;
import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A plugin for worker processes in crash tests ({@code slow-effects}): its handler {@code
 * slow-effect} writes one row per run into {@code table} through the transaction of a {@code
 * transactional} subscription, logs {@code "effect written for ID, holding the transaction"} and
 * then holds that transaction open for {@code work-time} before returning, so the row and DONE
 * commit together only after that. A process killed meanwhile leaves neither behind. A message that
 * carries the attribute {@code hold-attribute} (when that is set) holds it for {@code hold-time}
 * instead, so one process can hold some messages until it is killed and process others.
 *
 * <p>Not on the test class path's plugin list: a test adds it to a worker process with {@link
 * dev.pubsubworker.runtime.testing.CliProcess#withPlugin} and {@link #REFERENCE}. Settings: {@code
 * table}, a plain SQL identifier with columns {@code id text, fence bigint, pid bigint}; {@code
 * work-time}, a duration; {@code hold-attribute}, an attribute name or empty; {@code hold-time}, a
 * duration.
 */
public final class SlowEffectPlugin implements WorkerPlugin {

  /** The plugin's name. */
  public static final String NAME = "slow-effects";

  /** The handler it binds. */
  public static final String HANDLER = "slow-effect";

  /** Its defaults, the {@code reference.conf} a jar of this plugin would ship. */
  public static final String REFERENCE =
      """
      pubsub-worker.plugins.slow-effects {
        # Where each run writes its row: id text, fence bigint, pid bigint.
        table = slow_effects
        # How long each run holds its transaction open after writing the row.
        work-time = 1s
        # Runs of messages with this attribute hold it for hold-time instead (empty: none).
        hold-attribute = ""
        hold-time = 10m
      }
      """;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Module module(Config config) {
    String table = config.getString("table");
    if (!table.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
      throw new IllegalArgumentException("table must be a plain SQL identifier, but was " + table);
    }
    Duration workTime = config.getDuration("work-time");
    String holdAttribute = config.getString("hold-attribute");
    Duration holdTime = config.getDuration("hold-time");
    return binder ->
        Handlers.bind(binder, HANDLER)
            .toInstance(new SlowEffect(table, workTime, holdAttribute, holdTime));
  }

  private static final class SlowEffect implements MessageHandler {

    private static final Logger log = LoggerFactory.getLogger(SlowEffect.class);

    private final String insert;
    private final Duration workTime;
    private final String holdAttribute;
    private final Duration holdTime;

    SlowEffect(String table, Duration workTime, String holdAttribute, Duration holdTime) {
      this.insert = "INSERT INTO " + table + " (id, fence, pid) VALUES (?, ?, ?)";
      this.workTime = workTime;
      this.holdAttribute = holdAttribute;
      this.holdTime = holdTime;
    }

    @Override
    public void handle(InboundMessage message, HandlerContext context) throws Exception {
      String id = message.attribute("id").orElseThrow();
      Connection tx =
          context
              .resource(Connection.class)
              .orElseThrow(() -> new IllegalStateException("needs transactional = true"));
      try (PreparedStatement s = tx.prepareStatement(insert)) {
        s.setString(1, id);
        s.setLong(2, context.fencingToken().orElseThrow());
        s.setLong(3, ProcessHandle.current().pid());
        s.executeUpdate();
      }
      log.info("effect written for {}, holding the transaction", id);
      boolean hold = !holdAttribute.isEmpty() && message.attribute(holdAttribute).isPresent();
      // The slow part of the work: the transaction stays open, so a kill now rolls the row back.
      Thread.sleep((hold ? holdTime : workTime).toMillis());
      context.checkLease();
    }
  }
}
