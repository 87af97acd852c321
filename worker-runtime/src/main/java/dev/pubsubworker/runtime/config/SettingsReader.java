package dev.pubsubworker.runtime.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads one config object eagerly, records every problem instead of stopping at the first, and
 * reports the keys nobody read as unknown. Every getter returns a usable placeholder after
 * recording a problem, so reading continues and all problems surface together.
 */
final class SettingsReader {

  private final Config config;
  private final String path;
  private final List<ConfigProblem> problems;
  private final Set<String> read = new HashSet<>();

  SettingsReader(Config config, String path, List<ConfigProblem> problems) {
    this.config = config;
    this.path = path;
    this.problems = problems;
  }

  String path(String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  boolean has(String key) {
    read.add(key);
    return config.hasPath(quote(key));
  }

  String string(String key) {
    read.add(key);
    try {
      return config.getString(quote(key));
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a string"));
      return "";
    }
  }

  boolean bool(String key) {
    read.add(key);
    try {
      return config.getBoolean(quote(key));
    } catch (ConfigException e) {
      problem(key, describe(key, e, "true or false"));
      return false;
    }
  }

  int positiveInt(String key) {
    read.add(key);
    try {
      int value = config.getInt(quote(key));
      if (value < 1) {
        problem(key, "must be at least 1, but was " + value);
        return 1;
      }
      return value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a whole number"));
      return 1;
    }
  }

  int positiveIntOrZero(String key) {
    read.add(key);
    try {
      int value = config.getInt(quote(key));
      if (value < 0) {
        problem(key, "must be 0 or more, but was " + value);
        return 0;
      }
      return value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a whole number"));
      return 0;
    }
  }

  long positiveBytes(String key) {
    read.add(key);
    try {
      long value = config.getBytes(quote(key));
      if (value < 1) {
        problem(key, "must be at least 1 byte, but was " + value);
        return 1;
      }
      return value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a size such as 100m or 1048576"));
      return 1;
    }
  }

  Duration positiveDuration(String key) {
    read.add(key);
    try {
      Duration value = config.getDuration(quote(key));
      if (value.isNegative() || value.isZero()) {
        problem(key, "must be a positive duration, but was " + value);
        return Duration.ofSeconds(1);
      }
      return value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a duration such as 30s, 5m or 24h"));
      return Duration.ofSeconds(1);
    }
  }

  /** Reads an enum written in kebab case ({@code in-memory} for {@code IN_MEMORY}). */
  <E extends Enum<E>> E choice(String key, Class<E> type, E fallback) {
    String raw = string(key);
    if (raw.isEmpty() && !config.hasPath(quote(key))) {
      return fallback;
    }
    for (E e : type.getEnumConstants()) {
      if (kebab(e).equals(raw)) {
        return e;
      }
    }
    List<String> allowed = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      allowed.add(kebab(e));
    }
    problem(key, "must be one of " + String.join(" | ", allowed) + ", but was '" + raw + "'");
    return fallback;
  }

  /** A nested object, read by its own reader that shares this one's problem list. */
  SettingsReader object(String key) {
    read.add(key);
    try {
      return new SettingsReader(config.getConfig(quote(key)), path(key), problems);
    } catch (ConfigException e) {
      problem(key, describe(key, e, "an object { ... }"));
      return new SettingsReader(com.typesafe.config.ConfigFactory.empty(), path(key), problems);
    }
  }

  /** The keys of this object, sorted. */
  Set<String> keys() {
    return new TreeSet<>(config.root().keySet());
  }

  /** The raw config of this object. */
  Config config() {
    return config;
  }

  /** Marks a key as read without reading it (a subtree owned by someone else). */
  void skip(String key) {
    read.add(key);
  }

  /** Records every key present but never read as an unknown setting. */
  void rejectUnknown() {
    for (String key : keys()) {
      if (!read.contains(key)) {
        problems.add(
            new ConfigProblem(path(key), "unknown setting", origin(config.root().get(key))));
      }
    }
  }

  void problem(String key, String problem) {
    ConfigValue value = config.root().get(key);
    problems.add(new ConfigProblem(path(key), problem, value == null ? "" : origin(value)));
  }

  static String origin(ConfigValue value) {
    ConfigOrigin o = value.origin();
    if (o.filename() != null) {
      return o.filename() + (o.lineNumber() > 0 ? ":" + o.lineNumber() : "");
    }
    if (o.url() != null) {
      return o.url() + (o.lineNumber() > 0 ? ":" + o.lineNumber() : "");
    }
    return o.description();
  }

  private String describe(String key, ConfigException e, String expected) {
    if (e instanceof ConfigException.Missing) {
      return "is required";
    }
    ConfigValue value = config.root().get(key);
    if (value == null) {
      return "expected " + expected;
    }
    if (value.valueType() == ConfigValueType.STRING
        || value.valueType() == ConfigValueType.NUMBER
        || value.valueType() == ConfigValueType.BOOLEAN) {
      return "expected " + expected + ", but got '" + value.unwrapped() + "'";
    }
    return "expected "
        + expected
        + ", but got "
        + (value.valueType() == ConfigValueType.OBJECT
            ? "an object"
            : "a " + value.valueType().name().toLowerCase(Locale.ROOT));
  }

  static <E extends Enum<E>> String kebab(E e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  private static String quote(String key) {
    return com.typesafe.config.ConfigUtil.quoteString(key);
  }
}
