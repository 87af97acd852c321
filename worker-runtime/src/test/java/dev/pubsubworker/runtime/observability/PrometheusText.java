package dev.pubsubworker.runtime.observability;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The samples of a Prometheus text-format scrape (0.0.4), for assertions. */
final class PrometheusText {

  /** One sample line. */
  record Sample(String name, Map<String, String> labels, double value) {}

  private static final Pattern LINE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  final List<Sample> samples = new ArrayList<>();

  PrometheusText(String text) {
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line.trim());
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new LinkedHashMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
    }
  }

  /** The value of the one sample named {@code name} whose labels include {@code labels}. */
  OptionalDouble value(String name, String... labels) {
    List<Sample> found = find(name, labels);
    if (found.size() > 1) {
      throw new IllegalArgumentException("several samples match " + name + " " + List.of(labels));
    }
    return found.isEmpty() ? OptionalDouble.empty() : OptionalDouble.of(found.get(0).value());
  }

  /** The value, or 0 when there is no such sample yet. */
  double valueOrZero(String name, String... labels) {
    return value(name, labels).orElse(0);
  }

  /** Every sample named {@code name} whose labels include the pairs {@code k1, v1, k2, v2...}. */
  List<Sample> find(String name, String... labels) {
    List<Sample> out = new ArrayList<>();
    for (Sample s : samples) {
      if (!s.name().equals(name)) {
        continue;
      }
      boolean all = true;
      for (int i = 0; i + 1 < labels.length; i += 2) {
        if (!labels[i + 1].equals(s.labels().get(labels[i]))) {
          all = false;
          break;
        }
      }
      if (all) {
        out.add(s);
      }
    }
    return out;
  }
}
