package dev.pubsubworker.runtime.config;

import java.util.regex.Pattern;

/** Pub/Sub's rules for the resource names a config holds: projects, subscriptions and topics. */
final class ResourceNames {

  private ResourceNames() {}

  /** A project id as Pub/Sub resource names carry it (domain-scoped ones have a colon). */
  static final String PROJECT_ID = "[A-Za-z0-9][A-Za-z0-9.:_-]{0,99}";

  /** Pub/Sub's rule for a subscription id, alone or in a full resource name. */
  static final String SUBSCRIPTION_NAME =
      "(projects/" + PROJECT_ID + "/subscriptions/)?[A-Za-z][A-Za-z0-9._~+%-]{0,254}";

  /** Pub/Sub's rule for a topic id: 3-255 characters, a letter first, never {@code goog...}. */
  static final String TOPIC_ID = "(?!goog)[A-Za-z][A-Za-z0-9._~+%-]{2,254}";

  static final Pattern SUBSCRIPTION_PATH =
      Pattern.compile("projects/(" + PROJECT_ID + ")/subscriptions/(" + TOPIC_ID + ")");

  static final Pattern TOPIC_PATH =
      Pattern.compile("projects/(" + PROJECT_ID + ")/topics/(" + TOPIC_ID + ")");
}
