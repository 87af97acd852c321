package dev.pubsubworker.testservices;

/**
 * A library the requested service needs is not on the test class path. This is a build mistake, not
 * a missing service, so it is never turned into a skip. The test-services dependencies of {@code
 * worker-testkit} are optional: a module declares the clients it uses itself.
 */
final class MissingDependencyException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  MissingDependencyException(String what, String coordinates) {
    super(what + " needs " + coordinates + " on the test class path; add it as a test dependency");
  }

  /** Throws unless {@code className} can be loaded. */
  static void require(String className, String what, String coordinates) {
    if (!ClassPresence.isPresent(className)) {
      throw new MissingDependencyException(what, coordinates);
    }
  }
}
