package dev.pubsubworker.runtime.config;

import com.google.api.core.InternalApi;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The secrets this process was configured with, and the one function that keeps them out of
 * everything it prints: {@link #mask}. Every text that comes from outside the code passes it before
 * it is written — {@code check-config}'s echo of the config, each command's error line (and its
 * stack trace with {@code --verbose}), every log line in both formats (message, arguments, MDC
 * values, exception messages and causes, so also what HikariCP, the JDBC drivers, Lettuce and the
 * Google clients log), and the {@code /readyz} and {@code /healthz} bodies.
 *
 * <p>Filled when a config is read ({@link WorkerConfig#load}): the value of every setting whose
 * name holds a secret ({@code lock-store.sql.password}, a plugin's {@code api-key} or {@code
 * client-secret}, …), and in every setting that is a URL the userinfo's password and each {@code
 * password=}-style parameter ({@code ?password=}, {@code ;PASSWORD=}, {@code (password=…)}) — so
 * also the values that {@code ${?ENV}} overrides put there. Each is masked as written and in its
 * percent-decoded, percent-encoded and JSON-escaped forms, wherever it occurs; in addition {@code
 * name=value} parameters with a secret's name are masked by shape.
 *
 * <p>Which secrets: those of the config read last (a process reads one), those of every config a
 * running worker holds ({@link #keep}), and those {@link #register}ed. A value shorter than {@value
 * #MIN_LENGTH} characters is not masked by value: it would hide every occurrence of a digit or a
 * short word in unrelated text (a password that short is still masked by shape, and no URL form
 * that made a driver quote it is accepted).
 *
 * <p>Thread-safe; {@link #mask} takes no lock.
 */
@InternalApi("the secrets the worker masks in its output; read from the config it loads")
public final class KnownSecrets {

  /** What replaces a secret. */
  public static final String MASK = Secrets.MASK;

  /** The shortest value masked wherever it occurs. */
  public static final int MIN_LENGTH = 6;

  /** A config's secrets kept masked by a running worker until it closes this. */
  public interface Held extends AutoCloseable {
    /** Stops keeping them (the config read last and registered values stay masked). */
    @Override
    void close();
  }

  private static final Set<String> registered = new LinkedHashSet<>();
  private static final Map<Held, List<String>> held = new IdentityHashMap<>();
  private static List<String> lastRead = List.of();

  /** Every form of every secret, longest first, so that a secret is masked before its parts. */
  private static volatile List<String> forms = List.of();

  private KnownSecrets() {}

  /** Masks {@code secret} from now on, for the life of the process. A blank value is ignored. */
  public static synchronized void register(String secret) {
    if (secret != null && registered.add(secret)) {
      rebuild();
    }
  }

  /**
   * Keeps the secrets of {@code config} masked until the returned handle is closed, whatever config
   * is read meanwhile: what a worker does while it runs.
   */
  public static synchronized Held keep(WorkerConfig config) {
    List<String> secrets = secretsOf(config.source());
    Held h =
        new Held() {
          @Override
          public void close() {
            synchronized (KnownSecrets.class) {
              if (held.remove(this) != null) {
                rebuild();
              }
            }
          }
        };
    held.put(h, secrets);
    rebuild();
    return h;
  }

  /**
   * {@code text} with every known secret and every secret-named parameter value ({@code
   * password=…}) replaced by {@value #MASK}; null stays null.
   */
  public static String mask(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String masked = text;
    for (String form : forms) {
      if (masked.contains(form)) {
        masked = masked.replace(form, MASK);
      }
    }
    return Secrets.maskParametersInText(masked);
  }

  /**
   * Makes the secrets of {@code config}, a config just read, those of the config read last (see the
   * class comment). An unresolved or otherwise unreadable config gives what it can.
   */
  static synchronized void configure(Config config) {
    lastRead = secretsOf(config);
    rebuild();
  }

  private static List<String> secretsOf(Config config) {
    List<String> secrets = new ArrayList<>();
    try {
      for (Map.Entry<String, ConfigValue> e : config.entrySet()) {
        List<String> path = ConfigUtil.splitPath(e.getKey());
        boolean secretName = Secrets.isSecretName(path.get(path.size() - 1));
        for (String value : strings(e.getValue())) {
          if (secretName) {
            secrets.add(value);
          }
          if (value.contains("=") || value.contains("@")) {
            secrets.addAll(Secrets.secretsIn(value));
          }
        }
      }
    } catch (ConfigException e) {
      // Not resolved or not readable: the caller reports the problem; mask what was read.
    }
    return List.copyOf(secrets);
  }

  private static void rebuild() {
    Set<String> all = new LinkedHashSet<>();
    List<String> secrets = new ArrayList<>(registered);
    secrets.addAll(lastRead);
    held.values().forEach(secrets::addAll);
    for (String secret : secrets) {
      for (String form : formsOf(secret)) {
        if (form.length() >= MIN_LENGTH && !form.isBlank() && !form.equals(MASK)) {
          all.add(form);
        }
      }
    }
    List<String> sorted = new ArrayList<>(all);
    sorted.sort(Comparator.comparingInt(String::length).reversed());
    forms = List.copyOf(sorted);
  }

  private static List<String> strings(ConfigValue value) {
    List<String> out = new ArrayList<>();
    if (value.valueType() == ConfigValueType.LIST) {
      for (Object element : (List<?>) value.unwrapped()) {
        if (element instanceof String || element instanceof Number) {
          out.add(String.valueOf(element));
        }
      }
    } else if (value.valueType() == ConfigValueType.STRING
        || value.valueType() == ConfigValueType.NUMBER) {
      out.add(String.valueOf(value.unwrapped()));
      if (value.valueType() == ConfigValueType.NUMBER) {
        // A number renders as the text it was written as (password = 0012), which getString gives.
        out.add(value.render());
      }
    }
    return out;
  }

  /** The secret as written, percent-decoded both ways, percent-encoded, and JSON-escaped. */
  private static List<String> formsOf(String secret) {
    List<String> forms = new ArrayList<>();
    forms.add(secret);
    if (secret.indexOf('%') >= 0 || secret.indexOf('+') >= 0) {
      // As RFC 3986 decodes it (Lettuce, through java.net.URI) and as a form (pgjdbc: '+' is ' ').
      forms.add(percentDecoded(secret));
      try {
        forms.add(URLDecoder.decode(secret, StandardCharsets.UTF_8));
      } catch (IllegalArgumentException e) {
        // Not valid form encoding: no driver reads it so.
      }
    }
    String encoded = URLEncoder.encode(secret, StandardCharsets.UTF_8);
    forms.add(encoded);
    forms.add(encoded.replace("+", "%20"));
    forms.add(secret.replace("\\", "\\\\").replace("\"", "\\\""));
    return forms;
  }

  /** {@code %XX} sequences decoded as UTF-8; anything else, a stray {@code %} too, kept. */
  private static String percentDecoded(String s) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%'
          && i + 2 < s.length()
          && hex(s.charAt(i + 1)) >= 0
          && hex(s.charAt(i + 2)) >= 0) {
        bytes.write(hex(s.charAt(i + 1)) * 16 + hex(s.charAt(i + 2)));
        i += 2;
        continue;
      }
      flush(bytes, out);
      out.append(c);
    }
    flush(bytes, out);
    return out.toString();
  }

  private static void flush(ByteArrayOutputStream bytes, StringBuilder out) {
    if (bytes.size() > 0) {
      out.append(bytes.toString(StandardCharsets.UTF_8));
      bytes.reset();
    }
  }

  private static int hex(char c) {
    return Character.digit(c, 16);
  }
}
