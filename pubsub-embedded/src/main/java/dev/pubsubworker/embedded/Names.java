package dev.pubsubworker.embedded;

import io.grpc.Status;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Resource names of topics, subscriptions, snapshots and schemas, checked as Pub/Sub does. */
final class Names {

  private static final Pattern RESOURCE =
      Pattern.compile("projects/([^/]+)/(topics|subscriptions|snapshots|schemas)/([^/]+)");
  private static final Pattern ID = Pattern.compile("[A-Za-z][A-Za-z0-9\\-_.~+%]{2,254}");
  private static final Pattern PROJECT = Pattern.compile("projects/([^/]+)");

  private Names() {}

  /**
   * Checks a full resource name of {@code collection} ("topics", "subscriptions", "snapshots",
   * "schemas").
   *
   * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT "Invalid [topics] name: (name=...)"
   */
  static String check(String name, String collection) {
    Matcher matcher = RESOURCE.matcher(name);
    if (!matcher.matches()
        || !matcher.group(2).equals(collection)
        || !ID.matcher(matcher.group(3)).matches()
        || matcher.group(3).startsWith("goog")) {
      throw Status.INVALID_ARGUMENT
          .withDescription("Invalid [" + collection + "] name: (name=" + name + ")")
          .asRuntimeException();
    }
    return name;
  }

  /**
   * Checks a {@code projects/P} parent.
   *
   * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT naming the project
   */
  static String checkProject(String project) {
    if (!PROJECT.matcher(project).matches()) {
      throw Status.INVALID_ARGUMENT
          .withDescription("Invalid [projects] name: (name=" + project + ")")
          .asRuntimeException();
    }
    return project;
  }

  /** "projects/p/subscriptions/s" -> "s"; a bare id is returned as it is. */
  static String lastSegment(String name) {
    int slash = name.lastIndexOf('/');
    return slash < 0 ? name : name.substring(slash + 1);
  }

  /** "projects/p/subscriptions/s" -> "p". */
  static String project(String name) {
    String[] parts = name.split("/", -1);
    return parts.length > 1 ? parts[1] : "";
  }

  /** "projects/p/subscriptions/s" -> "projects/p". */
  static String parent(String name) {
    return "projects/" + project(name);
  }
}
