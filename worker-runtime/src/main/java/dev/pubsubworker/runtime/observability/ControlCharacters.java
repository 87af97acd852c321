package dev.pubsubworker.runtime.observability;

/**
 * Makes a string safe to put inside one text log line: every character that could end the line,
 * rewrite what a terminal shows or hide text is replaced by a visible escape, so that a value from
 * a message (a key, an attribute, a message id) can neither forge log lines nor colour them.
 *
 * <ul>
 *   <li>newline, carriage return, tab and the backslash itself become {@code \n}, {@code \r},
 *       {@code \t} and {@code \\} (so a backslash in the output always starts an escape);
 *   <li>the other C0 controls (NUL, ESC, …), DEL, the C1 controls U+0080–U+009F, the line and
 *       paragraph separators U+2028/U+2029 and the bidirectional overrides and isolates
 *       (U+202A–U+202E, U+2066–U+2069) become {@code \\uXXXX};
 *   <li>an unpaired surrogate becomes {@code \\uXXXX} too; everything else is kept.
 * </ul>
 */
final class ControlCharacters {

  private ControlCharacters() {}

  /** {@code s} with every control character escaped; {@code null} stays {@code null}. */
  static String escape(String s) {
    if (s == null) {
      return null;
    }
    int n = s.length();
    int first = 0;
    while (first < n && !needsEscape(s, first)) {
      first++;
    }
    if (first == n) {
      return s; // the common case: nothing to escape, no copy
    }
    StringBuilder out = new StringBuilder(n + 16).append(s, 0, first);
    for (int i = first; i < n; i++) {
      char c = s.charAt(i);
      if (!needsEscape(s, i)) {
        out.append(c);
        continue;
      }
      switch (c) {
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\\' -> out.append("\\\\");
        default -> {
          out.append("\\u");
          String hex = Integer.toHexString(c);
          out.append("0".repeat(4 - hex.length())).append(hex);
        }
      }
    }
    return out.toString();
  }

  /**
   * Whether {@code c} is one of the characters every log format writes as an escape: the C0
   * controls, DEL, the C1 controls U+0080–U+009F, U+2028/U+2029, and the bidirectional overrides
   * and isolates U+202A–U+202E and U+2066–U+2069. (The text format also escapes the backslash and
   * unpaired surrogates; JSON has its own rules for those.)
   */
  static boolean isControl(char c) {
    return c < 0x20
        || (c >= 0x7f && c <= 0x9f)
        || c == '\u2028'
        || c == '\u2029'
        || (c >= '\u202a' && c <= '\u202e')
        || (c >= '\u2066' && c <= '\u2069');
  }

  private static boolean needsEscape(String s, int i) {
    char c = s.charAt(i);
    if (c == '\\' || isControl(c)) {
      return true;
    }
    if (Character.isHighSurrogate(c)) {
      return i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1));
    }
    if (Character.isLowSurrogate(c)) {
      return i == 0 || !Character.isHighSurrogate(s.charAt(i - 1));
    }
    return false;
  }
}
