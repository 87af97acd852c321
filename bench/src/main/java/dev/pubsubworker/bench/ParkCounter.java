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

  private ParkCounter() {}

  /** Starts counting. */
  static ParkCounter start() {
    ParkCounter c = new ParkCounter();
    c.recording.enable("jdk.ThreadPark").withThreshold(Duration.ZERO).withoutStackTrace();
    c.recording.enable("jdk.JavaMonitorWait").withThreshold(Duration.ZERO).withoutStackTrace();
    c.recording.start();
    return c;
  }

  /** Stops counting; the waits by thread group. */
  Map<String, Long> stop() {
    recording.stop();
    Path file = null;
    try {
      file = Files.createTempFile("pubsub-worker-parks", ".jfr");
      recording.dump(file);
      Map<String, Long> byGroup = new TreeMap<>();
      for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
        RecordedThread t = e.getThread();
        String name = t == null || t.getJavaName() == null ? "(unknown)" : t.getJavaName();
        byGroup.merge(name.replaceAll("[0-9]+", "N"), 1L, Long::sum);
      }
      return byGroup;
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

  /** One line of the total per message, then the largest groups, each per message. */
  static String report(Map<String, Long> byGroup, int messages) {
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
            e ->
                s.append(
                    String.format(
                        Locale.ROOT,
                        "            %8.2f /msg  %s%n",
                        (double) e.getValue() / messages,
                        e.getKey())));
    return s.toString();
  }
}
