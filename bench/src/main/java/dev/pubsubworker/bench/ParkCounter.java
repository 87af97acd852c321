package dev.pubsubworker.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Counts the times threads of this JVM park ({@code LockSupport.park*}, JFR's {@code
 * jdk.ThreadPark}, every one however short) and wait on a monitor ({@code jdk.JavaMonitorWait})
 * while it runs, by thread group (the name with its digits replaced by N). Each such wait ends with
 * a wake-up by another thread or a timer: a thread hand-off. Divided by the messages processed, it
 * is a figure of the code path, not of the machine (beside spinning that ends before parking). The
 * recording costs time per event, so a run that counts is slower than one that does not.
 */
final class ParkCounter {

  private final Recording recording = new Recording();
  private final boolean stacks;

  private ParkCounter(boolean stacks) {
    this.stacks = stacks;
  }

  /**
   * Starts counting.
   *
   * @param stacks also count by the code that waited: the thread group, then the first two frames
   *     outside the JDK (recording stacks slows the run further; the counts are the same)
   */
  static ParkCounter start(boolean stacks) {
    ParkCounter c = new ParkCounter(stacks);
    for (String event : new String[] {"jdk.ThreadPark", "jdk.JavaMonitorWait"}) {
      var settings = c.recording.enable(event).withThreshold(Duration.ZERO);
      if (stacks) {
        settings.withStackTrace();
      } else {
        settings.withoutStackTrace();
      }
    }
    c.recording.start();
    return c;
  }

  /**
   * What was counted.
   *
   * @param byGroup the waits by thread group
   * @param sites per thread group, the waits by the code that waited (empty without stacks)
   */
  record Counts(Map<String, Long> byGroup, Map<String, Map<String, Long>> sites) {}

  /** Stops counting. */
  Counts stop() {
    recording.stop();
    Path file = null;
    try {
      file = Files.createTempFile("pubsub-worker-parks", ".jfr");
      recording.dump(file);
      Map<String, Long> byGroup = new TreeMap<>();
      Map<String, Map<String, Long>> sites = new TreeMap<>();
      for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
        RecordedThread t = e.getThread();
        String name = t == null || t.getJavaName() == null ? "(unknown)" : t.getJavaName();
        String group = name.replaceAll("[0-9]+", "N");
        byGroup.merge(group, 1L, Long::sum);
        if (stacks) {
          sites.computeIfAbsent(group, g -> new TreeMap<>()).merge(site(e), 1L, Long::sum);
        }
      }
      return new Counts(byGroup, sites);
    } catch (IOException e) {
      throw new UncheckedIOException("reading the park recording", e);
    } finally {
      recording.close();
      if (file != null) {
        try {
          Files.deleteIfExists(file);
        } catch (IOException ignored) {
          // a temporary file
        }
      }
    }
  }

  /** The first two frames of {@code e}'s stack outside the JDK, innermost first. */
  private static String site(RecordedEvent e) {
    RecordedStackTrace trace = e.getStackTrace();
    if (trace == null) {
      return "(no stack)";
    }
    StringBuilder s = new StringBuilder();
    int found = 0;
    for (RecordedFrame f : trace.getFrames()) {
      String type = f.getMethod().getType().getName();
      if (type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun.")) {
        continue;
      }
      if (found++ > 0) {
        s.append(" < ");
      }
      s.append(type.substring(type.lastIndexOf('.') + 1))
          .append('.')
          .append(f.getMethod().getName())
          .append(':')
          .append(f.getLineNumber());
      if (found == 2) {
        break;
      }
    }
    return found == 0 ? "(JDK only)" : s.toString();
  }

  /**
   * One line of the total per message, then the largest groups, each per message, and under each
   * its largest sites when counted.
   */
  static String report(Counts counted, int messages) {
    Map<String, Long> byGroup = counted.byGroup();
    Map<String, Map<String, Long>> sites = counted.sites();
    long total = byGroup.values().stream().mapToLong(Long::longValue).sum();
    StringBuilder s =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "            %8.2f thread hand-offs/msg (parks and monitor waits)%n",
                (double) total / messages));
    byGroup.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(6)
        .forEach(
            e -> {
              s.append(
                  String.format(
                      Locale.ROOT,
                      "            %8.2f /msg  %s%n",
                      (double) e.getValue() / messages,
                      e.getKey()));
              sites.getOrDefault(e.getKey(), Map.of()).entrySet().stream()
                  .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                  .limit(4)
                  .forEach(
                      site ->
                          s.append(
                              String.format(
                                  Locale.ROOT,
                                  "                %8.2f /msg  at %s%n",
                                  (double) site.getValue() / messages,
                                  site.getKey())));
            });
    return s.toString();
  }
}
