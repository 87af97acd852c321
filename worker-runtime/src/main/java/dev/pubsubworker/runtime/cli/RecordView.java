package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** Renders a lock record for people and as JSON. */
final class RecordView {

  /** What inspect prints for a key without a record. */
  static final String NO_RECORD = "no record for this key: the next delivery runs (at fence 1)";

  private RecordView() {}

  /** What the store holds for a key, for people: the record, an unreadable one, or none. */
  static String human(KeyArgument.Found found) {
    if (found.record().isPresent()) {
      return human(found.record().get());
    }
    return found.unreadable().map(RecordView::unreadable).orElse(NO_RECORD);
  }

  /** What the store holds for a key, as one JSON object. */
  static String json(String key, KeyArgument.Found found) {
    if (found.record().isPresent()) {
      return json(found.record().get());
    }
    return found.unreadable().map(RecordView::unreadableJson).orElse(absentJson(key));
  }

  /**
   * A record the backend cannot read: what is wrong, every stored field as stored (quoted, so that
   * an empty or space-padded value shows; times also as instants), and what it means.
   */
  static String unreadable(InvalidLockRecordException e) {
    StringBuilder sb = new StringBuilder();
    sb.append("key:          ").append(e.key()).append('\n');
    sb.append("UNREADABLE:   ").append(e.problem()).append('\n');
    sb.append("stored:       ");
    if (e.storedFields().isEmpty()) {
      sb.append("(nothing readable)\n");
    }
    boolean first = true;
    for (Map.Entry<String, String> f : e.storedFields().entrySet()) {
      if (!first) {
        sb.append("              ");
      }
      first = false;
      sb.append(f.getKey()).append(" = ").append(quote(f.getValue()));
      asInstant(f.getKey(), f.getValue()).ifPresent(t -> sb.append(" (").append(t).append(')'));
      sb.append('\n');
    }
    sb.append("reclaimable:  no: every delivery of this key is nacked and its handler not run")
        .append(
            " until the record is removed (forget KEY; the next delivery then runs at fence 1)");
    return sb.toString();
  }

  /** {@link #unreadable} as JSON: {@code readable} false, the problem, and the stored fields. */
  static String unreadableJson(InvalidLockRecordException e) {
    StringBuilder sb = new StringBuilder("{\"key\":");
    sb.append(quote(e.key()))
        .append(",\"readable\":false,\"problem\":")
        .append(quote(e.problem()))
        .append(",\"stored\":{");
    boolean first = true;
    for (Map.Entry<String, String> f : e.storedFields().entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      sb.append(quote(f.getKey())).append(':').append(quote(f.getValue()));
    }
    return sb.append("}}").toString();
  }

  /** A stored time field's value as an instant, when it is epoch milliseconds in range. */
  private static Optional<Instant> asInstant(String field, String value) {
    if (!field.equals("leaseExpiry") && !field.equals("expiresAt")) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.ofEpochMilli(Long.parseLong(value)));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

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
        + "\",\"readable\":true}";
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

  /**
   * A JSON string literal. Controls (C0, DEL, C1), line and paragraph separators and bidi overrides
   * are escaped too, so that a stored value cannot rearrange the terminal it is shown on.
   */
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
          if (c < 0x20
              || (c >= 0x7f && c <= 0x9f)
              || c == 0x2028
              || c == 0x2029
              || (c >= 0x202a && c <= 0x202e)
              || (c >= 0x2066 && c <= 0x2069)) {
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
