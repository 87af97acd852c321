package dev.pubsubworker.embedded;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker stand-in for the kill test: runs the real {@code Subscriber} on subscription {@code
 * args[1]} at {@code args[0]}, prints {@code holding N} as messages arrive, never acks (the client
 * keeps extending their leases), and waits to be killed.
 */
final class StreamHoldingProcess {

  private StreamHoldingProcess() {}

  public static void main(String[] args) throws InterruptedException {
    holdWithSubscriber(args[0], args[1]);
  }

  private static void holdWithSubscriber(String hostPort, String subscription)
      throws InterruptedException {
    ManagedChannel channel = ManagedChannelBuilder.forTarget(hostPort).usePlaintext().build();
    AtomicInteger held = new AtomicInteger();
    com.google.cloud.pubsub.v1.Subscriber subscriber =
        com.google.cloud.pubsub.v1.Subscriber.newBuilder(
                subscription,
                (com.google.cloud.pubsub.v1.MessageReceiver)
                    (message, consumer) -> {
                      System.out.println("holding " + held.incrementAndGet());
                      System.out.flush();
                    })
            .setChannelProvider(
                com.google.api.gax.rpc.FixedTransportChannelProvider.create(
                    com.google.api.gax.grpc.GrpcTransportChannel.create(channel)))
            .setCredentialsProvider(com.google.api.gax.core.NoCredentialsProvider.create())
            .build();
    subscriber.startAsync().awaitRunning();
    new CountDownLatch(1).await();
  }
}
