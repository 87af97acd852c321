package dev.pubsubworker.runtime.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.pubsubworker.core.DurationText;
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
  private final Set<String> failed = new HashSet<>();
  private final Config fallback;
  private final Config own;

  SettingsReader(Config config, String path, List<ConfigProblem> problems) {
    this(config, path, problems, ConfigFactory.empty(), config);
  }

  /**
   * A reader of {@code own} over {@code fallback} (a subscription over {@code
   * subscription-defaults}): a problem with a value that comes from the fallback is not recorded
   * again, since the fallback's own reader reports it; it still counts as {@link #failed}.
   */
  SettingsReader(Config own, Config fallback, String path, List<ConfigProblem> problems) {
    this(own.withFallback(fallback), path, problems, fallback, own);
  }

  private SettingsReader(
      Config config, String path, List<ConfigProblem> problems, Config fallback, Config own) {
    this.config = config;
    this.path = path;
    this.problems = problems;
    this.fallback = fallback;
    this.own = own;
  }

  /** Whether {@code key}'s value comes from the fallback (set there, not here). */
  private boolean inherited(String key) {
    return !own.root().containsKey(key) && fallback.root().containsKey(key);
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

  /**
   * A list of strings ({@code ["a", "b"]}); a single string is refused (write a one-element list),
   * so a forgotten bracket is an error rather than a silent one-element list.
   */
  List<String> stringList(String key) {
    read.add(key);
    ConfigValue raw = config.root().get(key);
    if (raw != null && raw.valueType() != ConfigValueType.LIST) {
      problem(key, describe(key, new ConfigException.BadValue(key, "not a list"), "a list [...]"));
      return List.of();
    }
    try {
      return List.copyOf(config.getStringList(quote(key)));
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a list of strings [...]"));
      return List.of();
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

  /**
   * A whole number in {@code min..max}; out of range, a fraction ({@code 2.5}, which Typesafe
   * Config would truncate to 2) or not a number is a problem.
   */
  int intInRange(String key, int min, int max) {
    read.add(key);
    ConfigValue raw = config.root().get(key);
    if (raw != null && isFraction(raw)) {
      problem(key, "must be a whole number " + range(min, max) + ", but was " + unwrapped(raw));
      return min;
    }
    try {
      long value = config.getLong(quote(key));
      if (value < min || value > max) {
        problem(key, "must be " + range(min, max) + ", but was " + value);
        return min;
      }
      return (int) value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a whole number"));
      return min;
    }
  }

  private static String range(long min, long max) {
    if (max == Integer.MAX_VALUE || max == Long.MAX_VALUE) {
      return min == 0 ? "0 or more" : "at least " + min;
    }
    return "in " + min + ".." + max;
  }

  /**
   * A size with a unit ({@code 100m}, {@code 512KiB}, {@code 1048576B}) in {@code 1..max} bytes. A
   * bare number is refused: Typesafe Config would read it as bytes, which is rarely what was meant.
   */
  long bytes(String key, long max) {
    read.add(key);
    ConfigValue raw = config.root().get(key);
    if (raw != null && isBareNumber(raw)) {
      String n = String.valueOf(raw.unwrapped()).trim();
      problem(key, "a size needs a unit, such as " + n + "MiB, or " + n + "B for bytes");
      return 1;
    }
    try {
      long value = config.getBytes(quote(key));
      if (value < 1 || value > max) {
        problem(
            key,
            "must be "
                + (max == Long.MAX_VALUE ? "at least 1 byte" : "1 byte.." + max + " bytes")
                + ", but was '"
                + unwrapped(raw)
                + "'");
        return 1;
      }
      return value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a size such as 100m or 512KiB"));
      return 1;
    }
  }

  long positiveBytes(String key) {
    return bytes(key, Long.MAX_VALUE);
  }

  /**
   * The longest duration any setting takes: ten years. Longer ones overflow the clients' and
   * stores' arithmetic (deadlines in milliseconds, timestamps) at run time.
   */
  static final Duration MAX_DURATION = Duration.ofDays(3650);

  Duration positiveDuration(String key) {
    return duration(key, Duration.ofNanos(1));
  }

  Duration duration(String key, Duration min) {
    return duration(key, min, MAX_DURATION);
  }

  /**
   * A duration with a unit ({@code 30s}, {@code 5m}, {@code 500ms}) of at least {@code min}. A bare
   * number is refused: Typesafe Config would read {@code lease = 5} as five milliseconds.
   */
  Duration duration(String key, Duration min, Duration max) {
    read.add(key);
    ConfigValue raw = config.root().get(key);
    if (raw != null && isBareNumber(raw)) {
      String n = String.valueOf(raw.unwrapped()).trim();
      problem(key, "a duration needs a unit, such as " + n + "s");
      return min.compareTo(Duration.ofSeconds(1)) > 0 ? min : Duration.ofSeconds(1);
    }
    try {
      Duration value = config.getDuration(quote(key));
      if (value.compareTo(max) > 0) {
        problem(
            key, "must be at most " + DurationText.of(max) + ", but was '" + unwrapped(raw) + "'");
        return max;
      }
      if (value.compareTo(min) < 0) {
        problem(
            key,
            (min.equals(Duration.ofNanos(1))
                    ? "must be a positive duration"
                    : min.isZero()
                        ? "must not be negative"
                        : "must be at least " + DurationText.of(min))
                + ", but was '"
                + unwrapped(raw)
                + "'");
        return min.compareTo(Duration.ofSeconds(1)) > 0 ? min : Duration.ofSeconds(1);
      }
      return value;
    } catch (ConfigException e) {
      problem(key, describe(key, e, "a duration such as 30s, 5m or 24h"));
      return min.compareTo(Duration.ofSeconds(1)) > 0 ? min : Duration.ofSeconds(1);
    }
  }

  /** A number with a fractional part ({@code 2.5}, {@code "2.5"}); {@code 2.0} is whole. */
  private static boolean isFraction(ConfigValue value) {
    if (value.valueType() != ConfigValueType.NUMBER
        && value.valueType() != ConfigValueType.STRING) {
      return false;
    }
    String text = String.valueOf(value.unwrapped()).trim();
    if (!text.matches("[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?")) {
      return false; // not a number at all: reading it reports that
    }
    try {
      return new java.math.BigDecimal(text).stripTrailingZeros().scale() > 0;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static boolean isBareNumber(ConfigValue value) {
    return value.valueType() == ConfigValueType.NUMBER
        || (value.valueType() == ConfigValueType.STRING
            && String.valueOf(value.unwrapped()).trim().matches("[+-]?[0-9]+(\\.[0-9]*)?"));
  }

  private static String unwrapped(ConfigValue value) {
    return value == null ? "" : String.valueOf(value.unwrapped());
  }

  /** Reads an enum written in kebab case ({@code in-memory} for {@code IN_MEMORY}). */
  <E extends Enum<E>> E choice(String key, Class<E> type, E fallback) {
    String raw = string(key);
    if (failed(key) || (raw.isEmpty() && !config.hasPath(quote(key)))) {
      return fallback; // not a string (a list, an object): that is the one problem
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
      Config merged = config.getConfig(quote(key));
      return new SettingsReader(
          merged, path(key), problems, subtreeOrEmpty(fallback, key), subtreeOrEmpty(own, key));
    } catch (ConfigException e) {
      problem(key, describe(key, e, "an object { ... }"));
      return new SettingsReader(ConfigFactory.empty(), path(key), problems);
    }
  }

  private static Config subtreeOrEmpty(Config config, String key) {
    ConfigValue v = config.root().get(key);
    return v instanceof com.typesafe.config.ConfigObject o ? o.toConfig() : ConfigFactory.empty();
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
      if (!read.contains(key) && !inherited(key)) {
        problems.add(
            new ConfigProblem(path(key), "unknown setting", origin(config.root().get(key))));
      }
    }
  }

  /** Whether a problem was recorded for {@code key} by this reader. */
  boolean failed(String key) {
    return failed.contains(key);
  }

  void problem(String key, String problem) {
    failed.add(key);
    if (inherited(key)) {
      return;
    }
    ConfigValue value = config.root().get(key);
    problems.add(new ConfigProblem(path(key), problem, value == null ? "" : origin(value)));
  }

  /**
   * Records a problem under {@code key} even when its value is inherited from the fallback: for a
   * problem that is this object's own although the value is the shared default (a default derived
   * from the object's name, such as a key namespace from a subscription id).
   */
  void ownProblem(String key, String problem) {
    failed.add(key);
    problems.add(new ConfigProblem(path(key), problem, ""));
  }

  /**
   * Records a problem of a combination of settings under the first of {@code keys} that this object
   * sets itself; if all are inherited from the fallback, its reader reports it.
   */
  void problemOnAny(String problem, String... keys) {
    for (String key : keys) {
      if (!inherited(key)) {
        problem(key, problem);
        return;
      }
    }
    failed.add(keys[0]);
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
