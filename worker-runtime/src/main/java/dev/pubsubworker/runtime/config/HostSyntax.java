package dev.pubsubworker.runtime.config;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The one check of a host in the config, before anything is resolved: a dotted-quad IPv4 address
 * (each part 0..255), an IPv6 address (bare or in brackets), or a host name (labels of letters,
 * digits, {@code -} and {@code _}, 1 to 63 characters each, not starting or ending with {@code -},
 * at most 253 characters in all, an optional final dot; the last label not all digits, as RFC 1123
 * asks so that names and addresses cannot be confused). {@code 999.1.1.1} is therefore neither: it
 * looks like an address and is not one, and a resolver would look it up as a name and fail at run
 * time.
 */
final class HostSyntax {

  private static final Pattern DOTTED_DIGITS = Pattern.compile("[0-9]+(\\.[0-9]+)*\\.?");
  private static final Pattern LABEL =
      Pattern.compile("[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?");
  private static final Pattern IPV6 =
      Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(%[A-Za-z0-9._-]+)?");

  private HostSyntax() {}

  /** Why {@code host} is not a host name or IP address, or empty if it is one. */
  static Optional<String> problem(String host) {
    if (host.isEmpty()) {
      return Optional.of("is empty");
    }
    String bare =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (bare.contains(":")) {
      return IPV6.matcher(bare).matches() && isIpv6(bare)
          ? Optional.empty()
          : Optional.of("is not an IPv6 address");
    }
    if (bare != host) {
      return Optional.of("only an IPv6 address goes in brackets");
    }
    if (DOTTED_DIGITS.matcher(host).matches()) {
      return isIpv4(host)
          ? Optional.empty()
          : Optional.of("is not an IPv4 address (four parts, each 0..255) nor a host name");
    }
    String name = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
    if (name.length() > 253) {
      return Optional.of("is longer than a host name may be (253 characters)");
    }
    String[] labels = name.split("\\.", -1);
    for (String label : labels) {
      if (!LABEL.matcher(label).matches()) {
        return Optional.of(
            "is not a host name (each dot-separated part: 1 to 63 letters, digits, '-' or '_', not"
                + " starting or ending with '-')");
      }
    }
    if (labels[labels.length - 1].chars().allMatch(Character::isDigit)) {
      return Optional.of("is not a host name (its last part is all digits)");
    }
    return Optional.empty();
  }

  private static boolean isIpv4(String text) {
    String[] parts = text.split("\\.", -1);
    if (parts.length != 4) {
      return false;
    }
    for (String p : parts) {
      if (p.isEmpty() || p.length() > 3 || Integer.parseInt(p) > 255) {
        return false;
      }
    }
    return true;
  }

  /** In brackets the JDK parses the text as an IPv6 literal only, and never looks it up. */
  private static boolean isIpv6(String text) {
    try {
      java.net.InetAddress.getByName("[" + text + "]");
      return true;
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }
}
