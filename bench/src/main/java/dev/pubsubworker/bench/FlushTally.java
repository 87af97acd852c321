package dev.pubsubworker.bench;

import dev.pubsubworker.core.GuardListener;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts a guard's store calls and the batches they went in, per verb, from its listener events:
 * how many calls the guard made ({@link GuardListener#backendCall}, one per claim or complete
 * whether sent alone or in a batch) and how many batches of how many entries it sent ({@link
 * GuardListener#batch}). From them, the round trips (flushes) the calls took: calls in no batch go
 * alone, so flushes = calls − batched entries + batches. A figure of the coalescer's choices, not
 * of the machine's speed.
 */
final class FlushTally implements GuardListener {

  private final Map<Verb, LongAdder> calls = new EnumMap<>(Verb.class);
  private final Map<Verb, LongAdder> batches = new EnumMap<>(Verb.class);
  private final Map<Verb, LongAdder> batched = new EnumMap<>(Verb.class);

  FlushTally() {
    for (Verb v : Verb.values()) {
      calls.put(v, new LongAdder());
      batches.put(v, new LongAdder());
      batched.put(v, new LongAdder());
    }
  }

  @Override
  public void backendCall(Verb verb, Duration latency, boolean succeeded) {
    calls.get(verb).increment();
  }

  @Override
  public void batch(Verb verb, int size, Duration latency, boolean succeeded) {
    batches.get(verb).increment();
    batched.get(verb).add(size);
  }

  /**
   * The claims' and completes' calls per flush since the last report, and the share of calls that
   * went in batches, e.g. {@code claims 1.13 per flush (24% batched), completes 1.00 per flush (0%
   * batched)}; the counts start again.
   */
  String reportAndReset() {
    StringBuilder out = new StringBuilder();
    for (Verb v : new Verb[] {Verb.CLAIM, Verb.COMPLETE}) {
      long c = calls.get(v).sumThenReset();
      long b = batches.get(v).sumThenReset();
      long e = batched.get(v).sumThenReset();
      if (c == 0) {
        continue;
      }
      long flushes = Math.max(1, c - e + b);
      out.append(out.length() == 0 ? "" : ", ")
          .append(v == Verb.CLAIM ? "claims" : "completes")
          .append(
              String.format(
                  Locale.ROOT,
                  " %.2f per flush (%.0f%% batched)",
                  (double) c / flushes,
                  100.0 * e / c));
    }
    return out.toString();
  }
}
