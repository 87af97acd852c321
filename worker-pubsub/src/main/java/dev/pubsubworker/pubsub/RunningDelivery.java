package dev.pubsubworker.pubsub;

import java.time.Instant;

/**
 * A delivery whose run is in progress on a thread: its claim, its handler and its DONE write (a
 * parked delivery holds no thread and is not running), as {@link GuardedReceiver#oldestRunning()}
 * reports the oldest one.
 *
 * @param messageId the message's id
 * @param thread the name of the thread that runs it; once its handler has returned and only the
 *     complete is on its way, no thread holds it and this says so
 * @param since when the run began, on the receiver's clock
 */
public record RunningDelivery(String messageId, String thread, Instant since) {}
