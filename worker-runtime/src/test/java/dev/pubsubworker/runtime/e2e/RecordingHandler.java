package dev.pubsubworker.runtime.e2e;

import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test handler: runs a scripted behaviour, then records one effect per message under the
 * message's {@code id} attribute (or its payload), and flags any overlap of two runs on one key.
 */
final class RecordingHandler implements MessageHandler {

  /** What the handler does before its effect; throwing skips the effect. */
  interface Behaviour {
    void run(InboundMessage message, HandlerContext context, int call) throws Exception;
  }

  final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
  final AtomicInteger calls = new AtomicInteger();
  final List<String> overlaps = new CopyOnWriteArrayList<>();
  final List<Integer> attempts = new CopyOnWriteArrayList<>();
  final List<Long> fences = new CopyOnWriteArrayList<>();
  private volatile Behaviour behaviour = (m, c, n) -> {};

  RecordingHandler behave(Behaviour b) {
    this.behaviour = b;
    return this;
  }

  @Override
  public void handle(InboundMessage message, HandlerContext context) throws Exception {
    int call = calls.incrementAndGet();
    attempts.add(message.deliveryAttempt());
    context.fencingToken().ifPresent(fences::add);
    String key = context.key().orElse("<unguarded>");
    AtomicInteger r = running.computeIfAbsent(key, k -> new AtomicInteger());
    if (r.incrementAndGet() > 1 && context.key().isPresent()) {
      overlaps.add(key);
    }
    try {
      behaviour.run(message, context, call);
      effects.computeIfAbsent(effectId(message), k -> new AtomicInteger()).incrementAndGet();
    } finally {
      r.decrementAndGet();
    }
  }

  int effects(String id) {
    AtomicInteger n = effects.get(id);
    return n == null ? 0 : n.get();
  }

  int totalEffects() {
    return effects.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  static String effectId(InboundMessage m) {
    return m.attribute("id").orElse(m.dataAsUtf8());
  }
}
