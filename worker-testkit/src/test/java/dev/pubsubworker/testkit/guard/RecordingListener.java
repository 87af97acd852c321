package dev.pubsubworker.testkit.guard;

import dev.pubsubworker.core.GuardListener;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records guard events as short strings, e.g. {@code "claimed:k:1"}. */
final class RecordingListener implements GuardListener {
  final List<String> events = new CopyOnWriteArrayList<>();

  @Override
  public void claimed(String key, long fence, boolean reclaim) {
    events.add("claimed:" + key + ":" + fence + (reclaim ? ":reclaim" : ""));
  }

  @Override
  public void duplicate(String key) {
    events.add("duplicate:" + key);
  }

  @Override
  public void contended(String key, Instant leaseExpiry) {
    events.add("contended:" + key + (leaseExpiry == null ? ":done" : ""));
  }

  @Override
  public void completed(String key, long fence, Duration workTime) {
    events.add("completed:" + key + ":" + fence);
  }

  @Override
  public void released(String key, long fence, boolean afterFailure) {
    events.add("released:" + key + ":" + fence + (afterFailure ? ":failure" : ""));
  }

  @Override
  public void leaseExtended(String key, long fence) {
    events.add("extended:" + key + ":" + fence);
  }

  @Override
  public void leaseLost(String key, long fence, LeaseLoss cause) {
    events.add("lost:" + key + ":" + fence + ":" + cause);
  }

  @Override
  public void fencedOut(String key, long fence) {
    events.add("fencedOut:" + key + ":" + fence);
  }

  @Override
  public void completeFailed(String key, long fence, RuntimeException error) {
    events.add("completeFailed:" + key + ":" + fence);
  }

  @Override
  public void fingerprintMismatch(String key) {
    events.add("fingerprintMismatch:" + key);
  }

  @Override
  public void backendCall(Verb verb, Duration latency, boolean succeeded) {
    events.add("call:" + verb + ":" + (succeeded ? "ok" : "failed"));
  }

  @Override
  public void batch(Verb verb, int size, Duration latency, boolean succeeded) {
    events.add("batch:" + verb + ":" + size + ":" + (succeeded ? "ok" : "failed"));
  }

  List<String> without(String prefix) {
    return events.stream().filter(e -> !e.startsWith(prefix)).toList();
  }
}
