package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.core.LockRecord;
import java.time.Duration;
import java.time.Instant;

/** Renders a lock record for people and as JSON. */
final class RecordView {

  private RecordView() {}

  static String human(LockRecord r) {
    StringBuilder sb = new StringBuilder();
    sb.append("key:          ").append(r.key()).append('\n');
    sb.append("state:        ").append(r.state()).append('\n');
    sb.append("fence:        ").append(r.fence()).append('\n');
    sb.append("lease expiry: ")
        .append(r.leaseExpiry())
        .append(" (")
        .append(relative(r.leaseExpiry(), r.observedAt()))
        .append(")\n");
    sb.append("expires at:   ")
        .append(r.expiresAt())
        .append(" (")
        .append(relative(r.expiresAt(), r.observedAt()))
        .append(")\n");
    sb.append("claim token:  ").append(r.claimToken() == null ? "-" : r.claimToken()).append('\n');
    sb.append("fingerprint:  ")
        .append(r.fingerprint() == null ? "-" : r.fingerprint())
        .append('\n');
    sb.append("reclaimable:  ")
        .append(
            r.reclaimable()
                ? "yes: the next delivery runs"
                : switch (r.state()) {
                  case DONE -> "no: deliveries are duplicates until it expires";
                  case CLAIMED -> "no: a live claim holds it";
                })
        .append('\n');
    sb.append("read at:      ").append(r.observedAt()).append(" (the store's clock)");
    return sb.toString();
  }

  static String json(LockRecord r) {
    return "{\"key\":"
        + quote(r.key())
        + ",\"state\":\""
        + r.state()
        + "\",\"fence\":"
        + r.fence()
        + ",\"leaseExpiry\":\""
        + r.leaseExpiry()
        + "\",\"expiresAt\":\""
        + r.expiresAt()
        + "\",\"claimToken\":"
        + (r.claimToken() == null ? "null" : quote(r.claimToken()))
        + ",\"fingerprint\":"
        + (r.fingerprint() == null ? "null" : quote(r.fingerprint()))
        + ",\"reclaimable\":"
        + r.reclaimable()
        + ",\"observedAt\":\""
        + r.observedAt()
        + "\"}";
  }

  static String absentJson(String key) {
    return "{\"key\":" + quote(key) + ",\"state\":null}";
  }

  private static String relative(Instant when, Instant now) {
    Duration d = Duration.between(now, when);
    String amount = format(d.abs());
    return d.isNegative() || d.isZero() ? amount + " ago" : "in " + amount;
  }

  private static String format(Duration d) {
    if (d.toDays() > 0) {
      return d.toDays() + "d " + d.toHoursPart() + "h";
    }
    if (d.toHours() > 0) {
      return d.toHours() + "h " + d.toMinutesPart() + "m";
    }
    if (d.toMinutes() > 0) {
      return d.toMinutes() + "m " + d.toSecondsPart() + "s";
    }
    return d.toSeconds() + "." + String.format("%03d", d.toMillisPart()) + "s";
  }

  /** A JSON string literal. */
  static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}
