package dev.pubsubworker.embedded;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.time.Duration;

/** Holds each request message for the latency set by {@link Faults#addLatency}. */
final class LatencyInterceptor implements ServerInterceptor {

  private final Faults faults;

  LatencyInterceptor(Faults faults) {
    this.faults = faults;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
        next.startCall(call, headers)) {
      @Override
      public void onMessage(Q message) {
        Duration latency = faults.latency();
        if (!latency.isZero()) {
          try {
            // The call's own executor thread waits: later messages of the call queue behind it.
            Thread.sleep(latency.toMillis(), latency.toNanosPart() % 1_000_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        super.onMessage(message);
      }
    };
  }
}
