package dev.pubsubworker.runtime.pubsub;

import java.time.Duration;

/**
 * One delivery in progress on a handler thread, as liveness reports the oldest: its claim, its
 * handler and its DONE write (a parked delivery holds no thread and is not running).
 *
 * @param subscription the subscription's id
 * @param thread the handler thread's name
 * @param age how long it has been running
 */
public record RunningHandler(String subscription, String thread, Duration age) {}
