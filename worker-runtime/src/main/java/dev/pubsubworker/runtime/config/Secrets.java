package dev.pubsubworker.runtime.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Keeps secrets out of anything printed. */
final class Secrets {

  static final String MASK = "***";

  private static final String SECRET_NAME =
      "[\\w.-]*?(?:password|passwd|pwd|pass|secret|token|api[-_]?key|credentials?)[\\w.-]*";

  /**
   * A secret query parameter, {@code ?k=v} or {@code &k=v}: the value runs to the next {@code &} (a
   * {@code ;} or {@code #} inside it is part of it). Names are matched case-insensitively:
   * password, pwd, passwd, pass, sslpassword, trustStorePassword, token, access_token, secret,
   * client_secret, api-key, credentials…
   */
  private static final Pattern SECRET_QUERY_PARAMETER =
      Pattern.compile("(?i)([?&]\\s*" + SECRET_NAME + "\\s*=)[^&]*");

  /** A secret H2 / SQL Server parameter, {@code ;k=v}: the value runs to the next {@code ;}. */
  private static final Pattern SECRET_SEMICOLON_PARAMETER =
      Pattern.compile("(?i)(;\\s*" + SECRET_NAME + "\\s*=)[^;&]*");

  /** A secret in MySQL's address form, {@code (k=v)} or {@code ,k=v}. */
  private static final Pattern SECRET_ADDRESS_PARAMETER =
      Pattern.compile("(?i)([(,]\\s*" + SECRET_NAME + "\\s*=)[^),]*");

  /** A parameter section starts at {@code ?name=}, {@code ;name=} or {@code &name=}. */
  private static final Pattern PARAMETERS = Pattern.compile("[?;&][A-Za-z][\\w.-]*=");

  /** Oracle's {@code jdbc:oracle:thin:user/password@host}. */
  private static final Pattern ORACLE_THIN =
      Pattern.compile("(?i)^(jdbc:oracle:thin:[^/@:]*/)(.*)(@.*)$");

  private Secrets() {}

  /**
   * {@code url} with every secret replaced by {@value #MASK}: the password of the userinfo ({@code
   * redis://user:pw@host}, {@code rediss://:pw@host}, {@code jdbc:mariadb://user:pw@host/db}; a
   * userinfo without a colon, {@code redis://pw@host}, is all masked) and the value of every secret
   * parameter ({@code ?password=}, {@code &pwd=}, {@code ;PASSWORD=}, {@code sslpassword=}, {@code
   * token=}, … any case), both when both are present. A password may contain {@code @ : / ? # % ;}:
   * the userinfo ends at the last {@code @} before the parameters. Everything else is kept, so the
   * result still says which host, database and options are used.
   */
  static String maskUri(String url) {
    if (url == null || url.isEmpty()) {
      return url;
    }
    Matcher oracle = ORACLE_THIN.matcher(url);
    if (oracle.matches()) {
      return oracle.group(1) + MASK + maskParameters(oracle.group(3));
    }
    String masked = maskParameters(url);
    int scheme = masked.indexOf("://");
    if (scheme < 0) {
      return masked;
    }
    int authority = scheme + 3;
    Matcher parameters = PARAMETERS.matcher(masked);
    int parametersStart = parameters.find(authority) ? parameters.start() : masked.length();
    int at = masked.lastIndexOf('@', parametersStart - 1);
    if (at < authority) {
      return masked;
    }
    String userInfo = masked.substring(authority, at);
    int colon = userInfo.indexOf(':');
    String user = colon < 0 ? MASK : userInfo.substring(0, colon) + ":" + MASK;
    return masked.substring(0, authority) + user + masked.substring(at);
  }

  private static String maskParameters(String url) {
    String masked = url;
    for (Pattern p :
        new Pattern[] {
          SECRET_QUERY_PARAMETER, SECRET_SEMICOLON_PARAMETER, SECRET_ADDRESS_PARAMETER
        }) {
      masked = p.matcher(masked).replaceAll("$1" + Matcher.quoteReplacement(MASK));
    }
    return masked;
  }
}
