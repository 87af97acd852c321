package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.CloudEmulator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A {@link ContainerStarter} for resolution tests: records what the Testcontainers source asked for
 * and answers with addresses the test chose (or refuses), so that source selection is checked
 * without a Docker engine.
 */
final class RecordingContainers implements ContainerStarter {

  /** What was asked for, in order: {@code "redis"}, {@code "postgres"}, an emulator's name, ... */
  final List<String> asked = new CopyOnWriteArrayList<>();

  private final Function<String, Object> answers;

  private RecordingContainers(Function<String, Object> answers) {
    this.answers = answers;
  }

  /**
   * Answers every call with {@code answers.apply(what)} ({@link HostPort} or {@link JdbcEndpoint}).
   */
  static RecordingContainers answering(Function<String, Object> answers) {
    return new RecordingContainers(answers);
  }

  /** Fails every call, as a Docker engine that cannot pull the image would. */
  static RecordingContainers refusing() {
    return new RecordingContainers(
        what -> {
          throw new IllegalStateException("cannot pull the image for " + what);
        });
  }

  @Override
  public HostPort redis() {
    return (HostPort) answer("redis");
  }

  @Override
  public JdbcEndpoint postgres() {
    return (JdbcEndpoint) answer("postgres");
  }

  @Override
  public JdbcEndpoint mariadb() {
    return (JdbcEndpoint) answer("mariadb");
  }

  @Override
  public HostPort emulator(CloudEmulator emulator) {
    return (HostPort) answer(emulator.name());
  }

  private Object answer(String what) {
    asked.add(what);
    return answers.apply(what);
  }
}
