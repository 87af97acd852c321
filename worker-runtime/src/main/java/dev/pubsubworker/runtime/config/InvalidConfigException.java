package dev.pubsubworker.runtime.config;

import java.util.List;

/**
 * The configuration has one or more problems; {@link #problems()} lists every one of them, so an
 * operator can fix them all in one go. The message is one line per problem.
 */
public final class InvalidConfigException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final transient List<ConfigProblem> problems;

  /**
   * @param problems at least one problem
   */
  public InvalidConfigException(List<ConfigProblem> problems) {
    super(render(problems));
    this.problems = List.copyOf(problems);
  }

  /** Every problem found, in the order they were found. */
  public List<ConfigProblem> problems() {
    return problems;
  }

  private static String render(List<ConfigProblem> problems) {
    StringBuilder sb = new StringBuilder();
    sb.append(
        problems.size() == 1
            ? "1 configuration problem"
            : problems.size() + " configuration problems");
    for (ConfigProblem p : problems) {
      sb.append(System.lineSeparator()).append("  ").append(p);
    }
    return sb.toString();
  }
}
