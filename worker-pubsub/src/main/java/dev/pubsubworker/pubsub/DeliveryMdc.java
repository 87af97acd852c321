package dev.pubsubworker.pubsub;

import dev.pubsubworker.api.InboundMessage;
import org.slf4j.MDC;

/** The {@link MdcKeys} of the delivery the calling thread works on. */
final class DeliveryMdc {

  private DeliveryMdc() {}

  /** The delivery's subscription, message id and attempt, from the start of a run. */
  static void open(String subscription, InboundMessage message) {
    MDC.put(MdcKeys.SUBSCRIPTION, subscription);
    MDC.put(MdcKeys.MESSAGE_ID, message.messageId());
    MDC.put(MdcKeys.DELIVERY_ATTEMPT, Integer.toString(message.deliveryAttempt()));
  }

  /** The lock key once known, as log lines render it. */
  static void key(String formattedKey) {
    MDC.put(MdcKeys.KEY, formattedKey);
  }

  /** The key turned out invalid: no key. */
  static void clearKey() {
    MDC.remove(MdcKeys.KEY);
  }

  /** The claim's fencing token once won. */
  static void fence(long fencingToken) {
    MDC.put(MdcKeys.FENCE, Long.toString(fencingToken));
  }

  /** The run is over on this thread. */
  static void close() {
    MDC.remove(MdcKeys.SUBSCRIPTION);
    MDC.remove(MdcKeys.MESSAGE_ID);
    MDC.remove(MdcKeys.DELIVERY_ATTEMPT);
    MDC.remove(MdcKeys.KEY);
    MDC.remove(MdcKeys.FENCE);
  }
}
