package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.api.PoisonMessageException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** Which failures are terminal: the poison exception and configured classes, in the cause chain. */
class TerminalFailuresTest {

  private final TerminalFailures configured =
      TerminalFailures.of(List.of(IllegalArgumentException.class));

  @Test
  void the_poison_exception_is_terminal_thrown_or_as_a_cause() {
    PoisonMessageException poison = new PoisonMessageException("bad json");
    assertThat(TerminalFailures.poisonOnly().find(poison)).containsSame(poison);
    assertThat(TerminalFailures.poisonOnly().find(new ExecutionException(poison)))
        .containsSame(poison);
  }

  @Test
  void a_configured_class_and_its_subclasses_are_terminal_others_are_not() {
    NumberFormatException subclass = new NumberFormatException("x");
    assertThat(configured.find(subclass)).containsSame(subclass);
    assertThat(configured.find(new RuntimeException("wrapped", subclass))).containsSame(subclass);
    assertThat(configured.find(new IllegalStateException("transient"))).isEmpty();
    assertThat(TerminalFailures.poisonOnly().find(subclass)).isEmpty();
  }

  @Test
  void the_outermost_terminal_exception_is_reported() {
    PoisonMessageException outer =
        new PoisonMessageException("outer", new IllegalArgumentException("inner"));
    assertThat(configured.find(new UncheckedIOException("io", new java.io.IOException(outer))))
        .containsSame(outer);
  }

  @Test
  void the_walk_stops_after_ten_causes_and_on_a_cycle() {
    Throwable deep = new PoisonMessageException("deep");
    for (int i = 0; i < PoisonMessageException.MAX_CAUSE_DEPTH; i++) {
      deep = new RuntimeException("level " + i, deep);
    }
    assertThat(TerminalFailures.poisonOnly().find(deep)).isPresent();
    assertThat(TerminalFailures.poisonOnly().find(new RuntimeException("one more", deep)))
        .isEmpty();

    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    assertThat(TerminalFailures.poisonOnly().find(a)).isEmpty();
  }
}
