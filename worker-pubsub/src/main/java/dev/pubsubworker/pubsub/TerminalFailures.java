package dev.pubsubworker.pubsub;

import dev.pubsubworker.api.PoisonMessageException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Which handler failures are terminal, so that the receiver dead-letters the message after this one
 * attempt instead of nacking it for a redelivery that would fail the same way: {@link
 * PoisonMessageException} and the classes given to {@link #of} (instanceof: a subclass matches),
 * found in the thrown exception or its cause chain, at most {@link
 * PoisonMessageException#MAX_CAUSE_DEPTH} causes deep (a cycle ends the walk). Immutable and
 * thread-safe.
 */
public final class TerminalFailures {

  private static final TerminalFailures POISON_ONLY =
      new TerminalFailures(List.of(PoisonMessageException.class));

  private final List<Class<? extends Throwable>> classes;

  private TerminalFailures(List<Class<? extends Throwable>> classes) {
    this.classes = List.copyOf(classes);
  }

  /** Only {@link PoisonMessageException} is terminal: the default of a receiver. */
  public static TerminalFailures poisonOnly() {
    return POISON_ONLY;
  }

  /**
   * {@link PoisonMessageException} and {@code classes} are terminal.
   *
   * @param classes further terminal exception classes, e.g. a JSON parser's parse exception
   */
  public static TerminalFailures of(List<Class<? extends Throwable>> classes) {
    List<Class<? extends Throwable>> all = new ArrayList<>();
    all.add(PoisonMessageException.class);
    for (Class<? extends Throwable> c : classes) {
      all.add(Objects.requireNonNull(c, "a terminal class"));
    }
    return new TerminalFailures(all);
  }

  /**
   * The terminal exception in {@code thrown} or its causes, if any: the first one, from the outside
   * in, that is an instance of a terminal class.
   */
  public Optional<Throwable> find(Throwable thrown) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    Throwable t = thrown;
    for (int depth = 0;
        t != null && depth <= PoisonMessageException.MAX_CAUSE_DEPTH && seen.add(t);
        depth++) {
      for (Class<? extends Throwable> c : classes) {
        if (c.isInstance(t)) {
          return Optional.of(t);
        }
      }
      t = t.getCause();
    }
    return Optional.empty();
  }

  /** The terminal classes, {@link PoisonMessageException} first. */
  public List<Class<? extends Throwable>> classes() {
    return classes;
  }

  @Override
  public String toString() {
    return "TerminalFailures" + classes.stream().map(Class::getName).toList();
  }
}
