package dev.pubsubworker.runtime.config;

/** Keeps secrets out of anything printed. */
final class Secrets {
  private Secrets() {}

  /** {@code redis://user:pw@host} becomes {@code redis://user:***@host}; other text is kept. */
  static String maskUri(String uri) {
    int scheme = uri.indexOf("://");
    int at = uri.lastIndexOf('@');
    if (scheme < 0 || at < scheme) {
      return maskQueryPassword(uri);
    }
    String userInfo = uri.substring(scheme + 3, at);
    int colon = userInfo.indexOf(':');
    String masked = colon < 0 ? "***" : userInfo.substring(0, colon) + ":***";
    return uri.substring(0, scheme + 3) + masked + uri.substring(at);
  }

  /** JDBC URLs may carry {@code password=...} as a parameter. */
  private static String maskQueryPassword(String url) {
    return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
  }
}
