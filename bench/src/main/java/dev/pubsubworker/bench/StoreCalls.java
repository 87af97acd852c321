package dev.pubsubworker.bench;

import dev.pubsubworker.runtime.observability.MetricNames;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Locale;

/**
 * One verb's store calls as a guard's metrics count them ({@link MetricNames#LOCK_STORE_CALLS}, one
 * per claim or complete whether sent alone or in a batch, and {@link
 * MetricNames#LOCK_STORE_BATCH_ENTRIES}, one sample per batch): the calls, the batches and the
 * calls that went in one. Calls in no batch go alone, so round trips = calls − batched + batches. A
 * figure of the group commit's choices, not of the machine's speed.
 *
 * @param calls the verb's store calls
 * @param batches the batches sent
 * @param batched the calls that went in a batch
 */
record StoreCalls(double calls, long batches, double batched) {

  /** The verbs the guard batches, as the metrics name them. */
  static final List<String> VERBS = List.of("claim", "complete");

  /** The counts of {@code verb} in {@code registry} so far. */
  static StoreCalls read(MeterRegistry registry, String verb) {
    double calls =
        registry.find(MetricNames.LOCK_STORE_CALLS).tag(MetricNames.VERB, verb).timers().stream()
            .mapToDouble(Timer::count)
            .sum();
    DistributionSummary batches =
        registry.find(MetricNames.LOCK_STORE_BATCH_ENTRIES).tag(MetricNames.VERB, verb).summary();
    return batches == null
        ? new StoreCalls(calls, 0, 0)
        : new StoreCalls(calls, batches.count(), batches.totalAmount());
  }

  /** What was counted since {@code earlier}. */
  StoreCalls since(StoreCalls earlier) {
    return new StoreCalls(
        calls - earlier.calls, batches - earlier.batches, batched - earlier.batched);
  }

  /** E.g. {@code claim 3,791 (308 batches, mean 2.6, 21% batched; 0.87 round trips per call)}. */
  String describe(String verb) {
    return String.format(
        Locale.ROOT,
        "%s %,.0f (%,d batches, mean %.1f, %.0f%% batched; %.2f round trips per call)",
        verb,
        calls,
        batches,
        batches == 0 ? 0.0 : batched / batches,
        calls == 0 ? 0.0 : 100 * batched / calls,
        calls == 0 ? 0.0 : (calls - batched + batches) / calls);
  }
}
