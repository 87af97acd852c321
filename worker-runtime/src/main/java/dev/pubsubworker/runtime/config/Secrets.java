package dev.pubsubworker.runtime.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where secrets sit in a URL: the shapes {@link KnownSecrets} masks and takes its values from. A
 * URL's password is found in the userinfo ({@code scheme://user:pw@host}) and in every parameter
 * whose name says it holds a secret ({@code ?password=}, {@code ;PASSWORD=}, MySQL's {@code
 * (password=…)}, any case).
 */
final class Secrets {

  static final String MASK = "***";

  /** Names masked by shape: anything that contains a secret-like word. */
  private static final String SECRET_NAME =
      "[\\w.-]*?(?:password|passwd|pwd|pass|secret|token|api[-_]?key|credentials?)[\\w.-]*";

  /**
   * Names whose values are taken as secrets: a stricter test than {@link #SECRET_NAME}, since every
   * occurrence of such a value is masked everywhere ({@code passwordCharacterEncoding=UTF-8} must
   * not make every {@code UTF-8} disappear).
   */
  private static final Pattern SECRET_VALUE_NAME =
      Pattern.compile(
          "(?i)[\\w.-]*(?:password|passwd|passphrase|secret|token|credentials?"
              + "|(?:api|secret|private|access)[-_]?key)|pwd|pass|auth|[\\w.-]*[-_.]pwd");

  /**
   * A secret query parameter, {@code ?k=v} or {@code &k=v}: the value runs to the next {@code &} (a
   * {@code ;} or {@code #} inside it is part of it). Names are matched case-insensitively:
   * password, pwd, passwd, pass, sslpassword, trustStorePassword, token, access_token, secret,
   * client_secret, api-key, credentials…
   */
  private static final Pattern SECRET_QUERY_PARAMETER =
      Pattern.compile("(?i)([?&]\\s*(" + SECRET_NAME + ")\\s*=)([^&]*)");

  /**
   * A secret H2 / SQL Server parameter, {@code ;k=v}: the value runs to the next {@code ;} (H2
   * reads an {@code &} in it as part of it).
   */
  private static final Pattern SECRET_SEMICOLON_PARAMETER =
      Pattern.compile("(?i)(;\\s*(" + SECRET_NAME + ")\\s*=)([^;]*)");

  /** A secret in MySQL's address form, {@code (k=v)} or {@code ,k=v}. */
  private static final Pattern SECRET_ADDRESS_PARAMETER =
      Pattern.compile("(?i)([(,]\\s*(" + SECRET_NAME + ")\\s*=)([^),]*)");

  private static final List<Pattern> PARAMETERS =
      List.of(SECRET_QUERY_PARAMETER, SECRET_SEMICOLON_PARAMETER, SECRET_ADDRESS_PARAMETER);

  /**
   * The same shapes in free text (a log line, a driver's message): a value ends at white space too,
   * so that masking never swallows the rest of a line or a stack trace.
   */
  private static final List<Pattern> PARAMETERS_IN_TEXT =
      List.of(
          Pattern.compile("(?i)([?&]\\s*(" + SECRET_NAME + ")\\s*=)([^&\\s]+)"),
          Pattern.compile("(?i)(;\\s*(" + SECRET_NAME + ")\\s*=)([^;\\s]+)"),
          Pattern.compile("(?i)([(,]\\s*(" + SECRET_NAME + ")\\s*=)([^),\\s]+)"));

  /** Oracle's {@code jdbc:oracle:thin:user/password@host}. */
  private static final Pattern ORACLE_THIN =
      Pattern.compile("(?i)^(jdbc:oracle:thin:[^/@:]*/)(.*)(@.*)$");

  /** HOST[:PORT][,HOST[:PORT]…] from {@code from}, ending the text or before {@code / ? # ;}. */
  private static final Pattern HOST_LIST =
      Pattern.compile(
          "(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._~%-]+)(?::\\d*)?"
              + "(?:,(?:\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._~%-]+)(?::\\d*)?)*(?=$|[/?#;])");

  /** Characters a user name in a userinfo never holds: they belong to a path or parameters. */
  private static final String NOT_IN_USER = "/?#&;=@";

  private Secrets() {}

  /**
   * {@code url} with every secret replaced by {@value #MASK}: the password of the userinfo ({@code
   * redis://user:pw@host}, {@code rediss://:pw@host}; a userinfo without a colon, {@code
   * redis://pw@host}, is all masked) and the value of every secret parameter ({@code ?password=},
   * {@code &pwd=}, {@code ;PASSWORD=}, {@code sslpassword=}, {@code token=}, … any case), both when
   * both are present. A password may contain {@code @ : / ? # % & ; =} (see {@link #userInfo}).
   * Everything else is kept, so the result still says which host, database and options are used.
   */
  static String maskUri(String url) {
    if (url == null || url.isEmpty()) {
      return url;
    }
    Matcher oracle = ORACLE_THIN.matcher(url);
    if (oracle.matches()) {
      return oracle.group(1) + MASK + maskParameters(oracle.group(3), PARAMETERS);
    }
    String masked = url;
    Optional<int[]> userInfo = userInfo(url);
    if (userInfo.isPresent()) {
      int start = userInfo.get()[0];
      int end = userInfo.get()[1];
      int colon = url.indexOf(':', start);
      String user = colon < 0 || colon > end ? MASK : url.substring(start, colon + 1) + MASK;
      masked = url.substring(0, start) + user + url.substring(end);
    }
    return maskParameters(masked, PARAMETERS);
  }

  /** {@code text} with the value of every secret parameter in it masked (see {@link #maskUri}). */
  static String maskParametersInText(String text) {
    return text.indexOf('=') < 0 ? text : maskParameters(text, PARAMETERS_IN_TEXT);
  }

  /**
   * The secrets {@code url} holds, as written: the userinfo's password (for {@code redis*:} URIs
   * also a userinfo without a colon, which the Redis driver reads as the password) and the value of
   * each parameter whose name is a secret's ({@code password}, {@code sslpassword}, {@code pwd},
   * {@code token}, {@code client_secret}, {@code api-key}, …).
   */
  static List<String> secretsIn(String url) {
    List<String> secrets = new ArrayList<>();
    if (url == null || url.isEmpty()) {
      return secrets;
    }
    Matcher oracle = ORACLE_THIN.matcher(url);
    if (oracle.matches()) {
      secrets.add(oracle.group(2));
    }
    userInfo(url)
        .ifPresent(
            range -> {
              String userInfo = url.substring(range[0], range[1]);
              int colon = userInfo.indexOf(':');
              if (colon >= 0) {
                secrets.add(userInfo.substring(colon + 1));
              } else if (url.regionMatches(true, 0, "redis", 0, 5)) {
                secrets.add(userInfo);
              }
            });
    for (Pattern p : PARAMETERS) {
      Matcher m = p.matcher(url);
      while (m.find()) {
        if (isSecretName(m.group(2).trim())) {
          secrets.add(m.group(3));
        }
      }
    }
    return secrets;
  }

  /**
   * Whether a setting or parameter of this name holds a secret ({@code password}, {@code api-key}).
   */
  static boolean isSecretName(String name) {
    return SECRET_VALUE_NAME.matcher(name).matches();
  }

  /**
   * Where the userinfo of {@code scheme://userinfo@host…} is: {@code [start, end)}, {@code end} at
   * its {@code @}. A password may hold any character, {@code @ / ? # & ; =} included, so the
   * userinfo ends at the last {@code @} that is followed by a host list ({@code host[:port]},
   * comma-separated) and then the end, {@code /}, {@code ?}, {@code #} or {@code ;}, and that is
   * preceded by a user name without {@code / ? # & ; = @}; with a {@code ?} before it, the host
   * must be followed by a {@code /path}. An {@code @} past the first {@code ?} after such a host
   * belongs to the parameters ({@code ?user=ops@example.com}).
   */
  static Optional<int[]> userInfo(String url) {
    int scheme = url.indexOf("://");
    if (scheme < 0) {
      return Optional.empty();
    }
    int start = scheme + 3;
    int chosen = -1;
    int limit = url.length();
    for (int at = url.indexOf('@', start); at >= 0 && at < limit; at = url.indexOf('@', at + 1)) {
      int colon = url.indexOf(':', start);
      String user = url.substring(start, colon < 0 || colon > at ? at : colon);
      if (user.chars().anyMatch(c -> NOT_IN_USER.indexOf(c) >= 0)) {
        continue;
      }
      int hostEnd = hostListEnd(url, at + 1);
      if (hostEnd < 0
          || url.substring(start, at).indexOf('?') >= 0
              && (hostEnd == url.length() || url.charAt(hostEnd) != '/')) {
        // With a '?' before it, an '@' is taken for the userinfo's end only if a path follows
        // the host: ?user=ops@example.com is a parameter.
        continue;
      }
      chosen = at;
      int query = url.indexOf('?', hostEnd);
      if (query >= 0) {
        limit = Math.min(limit, query);
      }
    }
    return chosen < 0 ? Optional.empty() : Optional.of(new int[] {start, chosen});
  }

  private static int hostListEnd(String url, int from) {
    Matcher m = HOST_LIST.matcher(url).region(from, url.length());
    m.useTransparentBounds(true).useAnchoringBounds(false);
    return m.lookingAt() ? m.end() : -1;
  }

  private static String maskParameters(String url, List<Pattern> patterns) {
    String masked = url;
    for (Pattern p : patterns) {
      masked = p.matcher(masked).replaceAll("$1" + Matcher.quoteReplacement(MASK));
    }
    return masked;
  }
}
