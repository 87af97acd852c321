package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.OutputStreamAppender;
import dev.pubsubworker.runtime.config.LogFormat;
import dev.pubsubworker.runtime.config.LogSourceLocation;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Not a test: a measurement, run by hand, of what {@code logging.googleapis.com/sourceLocation}
 * costs per JSON line (logback's caller data: a stack walk of the logging thread). One logger with
 * the worker's encoder writing to a null stream, the dispatcher's MDC set, a line written at a
 * given stack depth; variants (json without and with the source location, and text) measured in
 * interleaved rounds, in a changing order, and reported as the median and the lowest round in ns
 * per line. Read the difference and the ratio, not the absolute figures, which move with the
 * machine's load.
 *
 * <pre>{@code
 * java -cp worker-runtime/target/classes:worker-runtime/target/test-classes:$(cat cp.txt) \
 *     dev.pubsubworker.runtime.observability.SourceLocationCost [rounds] [lines per round]
 * }</pre>
 */
public final class SourceLocationCost {

  private SourceLocationCost() {}

  private enum Variant {
    JSON_NONE,
    JSON_ALL,
    TEXT
  }

  private static final int[] DEPTHS = {0, 40};

  /** Runs the measurement; arguments: rounds (default 15), lines per round (default 20000). */
  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
    int lines = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    LoggerContext context = new LoggerContext();
    LogbackMDCAdapter mdc = new LogbackMDCAdapter();
    context.setMDCAdapter(mdc);
    WorkerLogEncoder encoder = new WorkerLogEncoder();
    encoder.setContext(context);
    encoder.start();
    OutputStreamAppender<ILoggingEvent> out = new OutputStreamAppender<>();
    out.setContext(context);
    out.setEncoder(encoder);
    out.setOutputStream(OutputStream.nullOutputStream());
    out.start();
    Logger logger = context.getLogger("dev.pubsubworker.pubsub.Dispatcher");
    logger.setAdditive(false);
    logger.addAppender(out);
    logger.setLevel(Level.INFO);
    mdc.put(MdcKeys.SUBSCRIPTION, "orders");
    mdc.put(MdcKeys.MESSAGE_ID, "1234567890123");
    mdc.put(MdcKeys.DELIVERY_ATTEMPT, "2");
    mdc.put(MdcKeys.KEY, "orders:po-7");
    mdc.put(MdcKeys.FENCE, "3");

    System.out.printf(
        "java %s, %d cores; %d rounds x %d lines per variant and depth%n",
        System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors(),
        rounds,
        lines);
    for (int depth : DEPTHS) {
      Map<Variant, List<Double>> results = new LinkedHashMap<>();
      for (Variant v : Variant.values()) {
        results.put(v, new ArrayList<>());
      }
      int[] frames = new int[1];
      // Warm-up: every variant, unrecorded.
      for (int w = 0; w < 5; w++) {
        for (Variant v : Variant.values()) {
          measure(encoder, logger, v, depth, lines, frames);
        }
      }
      for (int r = 0; r < rounds; r++) {
        Variant[] order = Variant.values();
        if (r % 2 == 1) {
          java.util.Collections.reverse(Arrays.asList(order));
        }
        for (Variant v : order) {
          results.get(v).add(measure(encoder, logger, v, depth, lines, frames));
        }
      }
      System.out.printf("stack depth at the log call: %d frames%n", frames[0]);
      double none = median(results.get(Variant.JSON_NONE));
      for (Map.Entry<Variant, List<Double>> e : results.entrySet()) {
        double med = median(e.getValue());
        System.out.printf(
            "  %-10s median %7.0f ns/line  lowest %7.0f  (x%.2f of json without)%n",
            e.getKey(),
            med,
            e.getValue().stream().mapToDouble(Double::doubleValue).min().orElse(0),
            med / none);
      }
      System.out.printf(
          "  source location costs %.0f ns/line (median json all - median json none)%n",
          median(results.get(Variant.JSON_ALL)) - none);
    }
    context.stop();
  }

  private static double measure(
      WorkerLogEncoder encoder, Logger logger, Variant v, int depth, int lines, int[] frames) {
    encoder.setLogFormat(v == Variant.TEXT ? LogFormat.TEXT : LogFormat.JSON);
    encoder.setLogSourceLocation(
        v == Variant.JSON_ALL ? LogSourceLocation.ALL : LogSourceLocation.NONE);
    return atDepth(depth, logger, lines, frames);
  }

  private static double atDepth(int depth, Logger logger, int lines, int[] frames) {
    if (depth > 0) {
      return atDepth(depth - 1, logger, lines, frames);
    }
    frames[0] = new Throwable().getStackTrace().length;
    long start = System.nanoTime();
    for (int i = 0; i < lines; i++) {
      logger.info("message {} acked after {} ms", i, 12);
    }
    return (System.nanoTime() - start) / (double) lines;
  }

  private static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}
