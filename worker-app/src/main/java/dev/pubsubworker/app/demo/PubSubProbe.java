package dev.pubsubworker.app.demo;

import com.google.pubsub.v1.ListTopicsRequest;
import com.google.pubsub.v1.PublisherGrpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Whether a Pub/Sub server answers at a {@code host:port}, asked the way every Pub/Sub server
 * understands (a gRPC {@code ListTopics} over plaintext), so it works for Google's emulator and the
 * embedded server alike.
 */
final class PubSubProbe {

  private PubSubProbe() {}

  /**
   * True if the server at {@code hostPort} answered within {@code timeout}, with topics or with an
   * error of its own (any status but UNAVAILABLE or DEADLINE_EXCEEDED).
   */
  static boolean answers(String hostPort, String project, Duration timeout) {
    ManagedChannel channel = ManagedChannelBuilder.forTarget(hostPort).usePlaintext().build();
    try {
      PublisherGrpc.newBlockingStub(channel)
          .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .listTopics(
              ListTopicsRequest.newBuilder()
                  .setProject("projects/" + project)
                  .setPageSize(1)
                  .build());
      return true;
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      return code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED;
    } finally {
      channel.shutdownNow();
    }
  }
}
