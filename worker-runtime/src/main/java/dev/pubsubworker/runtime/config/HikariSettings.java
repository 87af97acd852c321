package dev.pubsubworker.runtime.config;

import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import com.zaxxer.hikari.HikariConfig;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code lock-store.sql.hikari { }}: HikariCP settings passed through to the lock store's pool, by
 * HikariCP's own names ({@code minimumIdle = 2}, {@code maxLifetime = 1800000}, {@code
 * dataSource.cachePrepStmts = true} for a driver property). Checked when the config is read,
 * without connecting: a name HikariCP has no setter for, a value its setter cannot take, a setting
 * the worker already owns (the URL, the credentials, the pool size, the timeouts the store's
 * settings derive) and any name containing "password" (use {@code lock-store.sql.password}, which
 * is masked in every output) are problems naming the path. {@code dataSource.*} names go to the
 * driver, which is not asked: a wrong one fails when the pool opens a connection.
 */
final class HikariSettings {

  /** HikariCP names the worker sets itself, and the setting to use instead. */
  private static final Map<String, String> OWNED =
      Map.ofEntries(
          Map.entry("jdbcUrl", "lock-store.sql.jdbc-url"),
          Map.entry("dataSourceClassName", "lock-store.sql.jdbc-url"),
          Map.entry("driverClassName", "lock-store.sql.jdbc-url"),
          Map.entry("username", "lock-store.sql.user"),
          Map.entry("dataSource.user", "lock-store.sql.user"),
          Map.entry("maximumPoolSize", "lock-store.sql.maximum-pool-size"),
          Map.entry("connectionTimeout", "lock-store.sql.connect-timeout"),
          Map.entry("validationTimeout", "lock-store.sql.connect-timeout"),
          Map.entry("dataSource.connectTimeout", "lock-store.sql.connect-timeout"),
          Map.entry("dataSource.loginTimeout", "lock-store.sql.connect-timeout"),
          Map.entry("dataSource.socketTimeout", "lock-store.sql.socket-timeout"),
          Map.entry("dataSource.cancelSignalTimeout", "lock-store.sql.socket-timeout"),
          Map.entry("poolName", ""),
          Map.entry("initializationFailTimeout", ""));

  private HikariSettings() {}

  /** The {@code hikari} object of {@code sql}, checked; empty when it is absent or empty. */
  static Map<String, String> read(SettingsReader sql) {
    if (!sql.has("hikari")) {
      return Map.of();
    }
    SettingsReader hikari = sql.object("hikari");
    if (!hikari.config().isEmpty() && !hikariPresent()) {
      sql.problem(
          "hikari",
          "needs com.zaxxer:HikariCP on the class path, which the runtime declares as an optional"
              + " dependency: add it (and worker-backend-sql) to the application's dependencies");
      return Map.of();
    }
    Map<String, String> settings = new LinkedHashMap<>();
    Map<String, ConfigValue> entries = new TreeMap<>();
    hikari.config().entrySet().forEach(e -> entries.put(e.getKey(), e.getValue()));
    for (Map.Entry<String, ConfigValue> e : entries.entrySet()) {
      String name = String.join(".", ConfigUtil.splitPath(e.getKey()));
      String problem = problem(name, e.getValue());
      if (problem != null) {
        hikari.problem(e.getKey(), problem);
      } else {
        settings.put(name, String.valueOf(e.getValue().unwrapped()));
      }
    }
    return Collections.unmodifiableMap(settings);
  }

  private static String problem(String name, ConfigValue value) {
    if (name.toLowerCase(Locale.ROOT).contains("password")) {
      return "a password goes in lock-store.sql.password, which is masked in every output";
    }
    String owned = OWNED.get(name);
    if (owned != null) {
      return owned.isEmpty()
          ? "is the worker's own (" + reason(name) + ")"
          : "is set from " + owned + ": set that instead";
    }
    if (value.valueType() != ConfigValueType.STRING
        && value.valueType() != ConfigValueType.NUMBER
        && value.valueType() != ConfigValueType.BOOLEAN) {
      return "must be a string, a number or true/false, as HikariCP reads it";
    }
    if (name.startsWith("dataSource.")) {
      return null;
    }
    Method setter = setter(name);
    if (setter == null) {
      return "HikariCP has no setting '" + name + "' (names as in HikariConfig, e.g. minimumIdle)";
    }
    String text = String.valueOf(value.unwrapped());
    Class<?> type = setter.getParameterTypes()[0];
    try {
      if (type == int.class) {
        Integer.parseInt(text);
      } else if (type == long.class) {
        Long.parseLong(text);
      } else if (type == boolean.class && !text.equals("true") && !text.equals("false")) {
        return "must be true or false, but was '" + text + "'";
      } else if (type != String.class
          && type != int.class
          && type != long.class
          && type != boolean.class) {
        return "HikariCP's " + name + " takes a " + type.getSimpleName() + ", not a config value";
      }
    } catch (NumberFormatException ex) {
      return "must be a whole number"
          + (type == long.class && name.matches(".*(Timeout|Lifetime|Threshold|Time)$")
              ? " of milliseconds, as HikariCP reads it"
              : "")
          + ", but was '"
          + text
          + "'";
    }
    return null;
  }

  private static String reason(String name) {
    return name.equals("poolName")
        ? "the pool is named pubsub-worker-lock-store in metrics and logs"
        : "the pool starts without a connection, so a database that is down fails readiness, not"
            + " the start";
  }

  private static boolean hikariPresent() {
    try {
      Class.forName("com.zaxxer.hikari.HikariConfig", false, HikariSettings.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static Method setter(String name) {
    String setter = "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
    for (Method m : HikariConfig.class.getMethods()) {
      if (m.getName().equals(setter) && m.getParameterCount() == 1) {
        return m;
      }
    }
    return null;
  }
}
