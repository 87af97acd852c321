package dev.pubsubworker.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-variant samples of interleaved rounds (one value per round), in the order variants were first
 * recorded, with min / median / max. Not thread-safe: the main thread records.
 */
final class Samples {

  private final Map<String, List<Double>> values = new LinkedHashMap<>();

  /** Records one round's {@code value} for {@code variant}. */
  void add(String variant, double value) {
    values.computeIfAbsent(variant, k -> new ArrayList<>()).add(value);
  }

  /** The variants recorded so far. */
  List<String> variants() {
    return List.copyOf(values.keySet());
  }

  /** Whether {@code variant} has samples. */
  boolean has(String variant) {
    return values.containsKey(variant);
  }

  double min(String variant) {
    return sorted(variant).get(0);
  }

  double max(String variant) {
    List<Double> s = sorted(variant);
    return s.get(s.size() - 1);
  }

  double median(String variant) {
    List<Double> s = sorted(variant);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  private List<Double> sorted(String variant) {
    List<Double> s = new ArrayList<>(values.get(variant));
    Collections.sort(s);
    return s;
  }

  /** CPU time this process has used, in nanoseconds, or -1 if the JVM cannot tell. */
  static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }

  /** The system load average over the last minute, as {@code uptime} shows it. */
  static String loadAverage() {
    return String.format(
        java.util.Locale.ROOT,
        "%.2f",
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }
}
