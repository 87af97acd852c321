package dev.pubsubworker.testservices;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * What {@link PubSubEmulator#createSubscription(SubscriptionSpec)} creates: a fresh topic and a
 * subscription on it, with the options a test asks for. Immutable; build one with {@link
 * #newBuilder()}. The limits are Pub/Sub's own, so a spec that works here also works on the real
 * service.
 */
public final class SubscriptionSpec {

  /** Prefix of the generated topic and subscription names, unless set: {@value}. */
  public static final String DEFAULT_NAME_PREFIX = "test";

  /** Ack deadline unless set: 10 s, Pub/Sub's minimum and its default. */
  public static final Duration DEFAULT_ACK_DEADLINE = Duration.ofSeconds(10);

  static final Duration MIN_ACK_DEADLINE = Duration.ofSeconds(10);
  static final Duration MAX_ACK_DEADLINE = Duration.ofSeconds(600);
  static final int MIN_DELIVERY_ATTEMPTS = 5;
  static final int MAX_DELIVERY_ATTEMPTS = 100;
  static final Duration MAX_BACKOFF = Duration.ofSeconds(600);
  static final int MAX_NAME_PREFIX_LENGTH = 30;
  private static final Pattern NAME_PREFIX = Pattern.compile("[a-z][a-z0-9_]*");

  /** A retry policy's backoff bounds. */
  public record Backoff(Duration minimum, Duration maximum) {

    /**
     * @throws IllegalArgumentException unless {@code 0 <= minimum <= maximum <= 600 s}
     */
    public Backoff {
      Objects.requireNonNull(minimum, "minimum");
      Objects.requireNonNull(maximum, "maximum");
      if (minimum.isNegative() || maximum.compareTo(MAX_BACKOFF) > 0) {
        throw new IllegalArgumentException(
            "backoff must lie in 0..600 s, but was " + minimum + ".." + maximum);
      }
      if (minimum.compareTo(maximum) > 0) {
        throw new IllegalArgumentException(
            "minimum backoff must not exceed maximum, but was " + minimum + " > " + maximum);
      }
    }
  }

  private final String namePrefix;
  private final Duration ackDeadline;
  private final boolean exactlyOnceDelivery;
  private final boolean messageOrdering;
  private final OptionalInt deadLetterMaxDeliveryAttempts;
  private final Optional<Backoff> retryBackoff;

  private SubscriptionSpec(Builder builder) {
    this.namePrefix = builder.namePrefix;
    this.ackDeadline = builder.ackDeadline;
    this.exactlyOnceDelivery = builder.exactlyOnceDelivery;
    this.messageOrdering = builder.messageOrdering;
    this.deadLetterMaxDeliveryAttempts = builder.deadLetterMaxDeliveryAttempts;
    this.retryBackoff = builder.retryBackoff;
  }

  /** A builder with every option at its default. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /**
   * A plain subscription: no exactly-once delivery, no ordering, no dead letters, 10 s deadline.
   */
  public static SubscriptionSpec defaults() {
    return newBuilder().build();
  }

  /** A builder holding this spec's values. */
  public Builder toBuilder() {
    Builder builder = new Builder();
    builder.namePrefix = namePrefix;
    builder.ackDeadline = ackDeadline;
    builder.exactlyOnceDelivery = exactlyOnceDelivery;
    builder.messageOrdering = messageOrdering;
    builder.deadLetterMaxDeliveryAttempts = deadLetterMaxDeliveryAttempts;
    builder.retryBackoff = retryBackoff;
    return builder;
  }

  /** Prefix of the generated names (see {@link TestServices#uniqueName(String)}). */
  public String namePrefix() {
    return namePrefix;
  }

  /** The subscription's ack deadline, whole seconds. */
  public Duration ackDeadline() {
    return ackDeadline;
  }

  /** Whether the subscription has exactly-once delivery enabled. */
  public boolean exactlyOnceDelivery() {
    return exactlyOnceDelivery;
  }

  /** Whether the subscription delivers messages with the same ordering key in order. */
  public boolean messageOrdering() {
    return messageOrdering;
  }

  /**
   * The dead-letter policy's maximum delivery attempts; present when a dead-letter topic is
   * created.
   */
  public OptionalInt deadLetterMaxDeliveryAttempts() {
    return deadLetterMaxDeliveryAttempts;
  }

  /** The retry policy's backoff; empty for Pub/Sub's default (redeliver at once). */
  public Optional<Backoff> retryBackoff() {
    return retryBackoff;
  }

  @Override
  public String toString() {
    return "SubscriptionSpec{namePrefix="
        + namePrefix
        + ", ackDeadline="
        + ackDeadline
        + ", exactlyOnceDelivery="
        + exactlyOnceDelivery
        + ", messageOrdering="
        + messageOrdering
        + ", deadLetterMaxDeliveryAttempts="
        + deadLetterMaxDeliveryAttempts
        + ", retryBackoff="
        + retryBackoff
        + '}';
  }

  /** Builds a {@link SubscriptionSpec}; each setter validates its argument. Not thread-safe. */
  public static final class Builder {
    private String namePrefix = DEFAULT_NAME_PREFIX;
    private Duration ackDeadline = DEFAULT_ACK_DEADLINE;
    private boolean exactlyOnceDelivery;
    private boolean messageOrdering;
    private OptionalInt deadLetterMaxDeliveryAttempts = OptionalInt.empty();
    private Optional<Backoff> retryBackoff = Optional.empty();

    private Builder() {}

    /**
     * Prefix of the generated topic and subscription names. Default {@value #DEFAULT_NAME_PREFIX}.
     *
     * @throws IllegalArgumentException unless it matches {@code [a-z][a-z0-9_]*} and has at most 30
     *     characters
     */
    public Builder setNamePrefix(String namePrefix) {
      Objects.requireNonNull(namePrefix, "namePrefix");
      if (!NAME_PREFIX.matcher(namePrefix).matches()
          || namePrefix.length() > MAX_NAME_PREFIX_LENGTH) {
        throw new IllegalArgumentException(
            "namePrefix must match [a-z][a-z0-9_]* with at most "
                + MAX_NAME_PREFIX_LENGTH
                + " characters, but was '"
                + namePrefix
                + "'");
      }
      this.namePrefix = namePrefix;
      return this;
    }

    /**
     * The subscription's ack deadline. Default 10 s.
     *
     * @throws IllegalArgumentException unless it is whole seconds within 10..600 s
     */
    public Builder setAckDeadline(Duration ackDeadline) {
      Objects.requireNonNull(ackDeadline, "ackDeadline");
      if (ackDeadline.compareTo(MIN_ACK_DEADLINE) < 0
          || ackDeadline.compareTo(MAX_ACK_DEADLINE) > 0
          || ackDeadline.toMillis() % 1000 != 0) {
        throw new IllegalArgumentException(
            "ackDeadline must be whole seconds within 10..600 s, but was " + ackDeadline);
      }
      this.ackDeadline = ackDeadline;
      return this;
    }

    /** Enables exactly-once delivery. Default off. */
    public Builder setExactlyOnceDelivery(boolean exactlyOnceDelivery) {
      this.exactlyOnceDelivery = exactlyOnceDelivery;
      return this;
    }

    /** Enables message ordering. Default off. */
    public Builder setMessageOrdering(boolean messageOrdering) {
      this.messageOrdering = messageOrdering;
      return this;
    }

    /**
     * Creates a dead-letter topic (with a subscription of its own, so dead letters can be pulled)
     * and a dead-letter policy that forwards a message after {@code maxDeliveryAttempts}
     * deliveries. Default: no dead-letter policy.
     *
     * @throws IllegalArgumentException unless {@code maxDeliveryAttempts} is within 5..100
     */
    public Builder setDeadLetterPolicy(int maxDeliveryAttempts) {
      if (maxDeliveryAttempts < MIN_DELIVERY_ATTEMPTS
          || maxDeliveryAttempts > MAX_DELIVERY_ATTEMPTS) {
        throw new IllegalArgumentException(
            "maxDeliveryAttempts must be within 5..100, but was " + maxDeliveryAttempts);
      }
      this.deadLetterMaxDeliveryAttempts = OptionalInt.of(maxDeliveryAttempts);
      return this;
    }

    /**
     * A retry policy: a nacked or expired message is redelivered after an exponential backoff
     * between {@code minimum} and {@code maximum}. Default: none (redeliver at once).
     *
     * @throws IllegalArgumentException unless {@code 0 <= minimum <= maximum <= 600 s}
     */
    public Builder setRetryPolicy(Duration minimum, Duration maximum) {
      this.retryBackoff = Optional.of(new Backoff(minimum, maximum));
      return this;
    }

    /** The spec. */
    public SubscriptionSpec build() {
      return new SubscriptionSpec(this);
    }
  }
}
