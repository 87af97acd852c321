package dev.pubsubworker.testservices;

import java.util.List;
import java.util.function.Supplier;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * One service, resolved at most once per JVM, on first use. The outcome (found or unavailable) is
 * remembered and reported once; every later call returns the same instance or throws again with the
 * same line, without retrying.
 *
 * <p>Thread-safe: concurrent first calls wait for one resolution.
 */
final class ServiceSlot<T> {

  private final ServiceKind kind;
  private final ServiceEnvironment environment;
  private final Supplier<List<ServiceResolver.Step<T>>> steps;
  private Resolution<T> resolution;

  ServiceSlot(
      ServiceKind kind,
      ServiceEnvironment environment,
      Supplier<List<ServiceResolver.Step<T>>> steps) {
    this.kind = kind;
    this.environment = environment;
    this.steps = steps;
  }

  /**
   * The service.
   *
   * @throws TestAbortedException when it cannot be had (the test is skipped)
   * @throws AssertionFailedError when it cannot be had under {@code CI=true} (the test fails)
   */
  synchronized T get() {
    if (resolution == null) {
      resolution = ServiceResolver.resolve(kind, environment, steps.get());
      report(resolution);
    }
    if (resolution instanceof Resolution.Resolved<T> resolved) {
      return resolved.service();
    }
    String line = ((Resolution.Unavailable<T>) resolution).line();
    if (environment.ci()) {
      throw new AssertionFailedError(line);
    }
    throw new TestAbortedException(line);
  }

  private void report(Resolution<T> outcome) {
    if (outcome instanceof Resolution.Resolved<T> resolved) {
      environment.report(
          kind.displayName() + ": " + resolved.source().label() + " — " + resolved.detail());
    } else {
      String consequence = environment.ci() ? "failing (CI=true)" : "skipping";
      environment.report(
          kind.displayName()
              + ": unavailable, "
              + consequence
              + " — "
              + ((Resolution.Unavailable<T>) outcome).line());
    }
  }
}
