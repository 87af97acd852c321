package dev.pubsubworker.embedded;

import com.google.protobuf.Empty;
import com.google.pubsub.v1.DeleteTopicRequest;
import com.google.pubsub.v1.DetachSubscriptionRequest;
import com.google.pubsub.v1.DetachSubscriptionResponse;
import com.google.pubsub.v1.GetTopicRequest;
import com.google.pubsub.v1.ListTopicSnapshotsRequest;
import com.google.pubsub.v1.ListTopicSnapshotsResponse;
import com.google.pubsub.v1.ListTopicSubscriptionsRequest;
import com.google.pubsub.v1.ListTopicSubscriptionsResponse;
import com.google.pubsub.v1.ListTopicsRequest;
import com.google.pubsub.v1.ListTopicsResponse;
import com.google.pubsub.v1.PublishRequest;
import com.google.pubsub.v1.PublishResponse;
import com.google.pubsub.v1.PublisherGrpc;
import com.google.pubsub.v1.Topic;
import com.google.pubsub.v1.UpdateTopicRequest;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** The google.pubsub.v1.Publisher service over a {@link Broker}. */
final class PublisherService extends PublisherGrpc.PublisherImplBase {

  private final Broker broker;

  PublisherService(Broker broker) {
    this.broker = broker;
  }

  @Override
  public void createTopic(Topic request, StreamObserver<Topic> observer) {
    Rpc.answer(observer, () -> broker.createTopic(request));
  }

  @Override
  public void updateTopic(UpdateTopicRequest request, StreamObserver<Topic> observer) {
    Rpc.answer(observer, () -> broker.updateTopic(request.getTopic(), request.getUpdateMask()));
  }

  @Override
  public void publish(PublishRequest request, StreamObserver<PublishResponse> observer) {
    Rpc.answer(
        observer,
        () ->
            PublishResponse.newBuilder()
                .addAllMessageIds(broker.publish(request.getTopic(), request.getMessagesList()))
                .build());
  }

  @Override
  public void getTopic(GetTopicRequest request, StreamObserver<Topic> observer) {
    Rpc.answer(observer, () -> broker.getTopic(request.getTopic()));
  }

  @Override
  public void listTopics(ListTopicsRequest request, StreamObserver<ListTopicsResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<Topic> page =
              Rpc.page(
                  broker.listTopics(request.getProject()),
                  request.getPageSize(),
                  request.getPageToken());
          return ListTopicsResponse.newBuilder()
              .addAllTopics(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void listTopicSubscriptions(
      ListTopicSubscriptionsRequest request,
      StreamObserver<ListTopicSubscriptionsResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<String> page =
              Rpc.page(
                  broker.listTopicSubscriptions(request.getTopic()),
                  request.getPageSize(),
                  request.getPageToken());
          return ListTopicSubscriptionsResponse.newBuilder()
              .addAllSubscriptions(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void listTopicSnapshots(
      ListTopicSnapshotsRequest request, StreamObserver<ListTopicSnapshotsResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<String> page =
              Rpc.page(
                  broker.listTopicSnapshots(request.getTopic()),
                  request.getPageSize(),
                  request.getPageToken());
          return ListTopicSnapshotsResponse.newBuilder()
              .addAllSnapshots(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void deleteTopic(DeleteTopicRequest request, StreamObserver<Empty> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.deleteTopic(request.getTopic());
          return Empty.getDefaultInstance();
        });
  }

  @Override
  public void detachSubscription(
      DetachSubscriptionRequest request, StreamObserver<DetachSubscriptionResponse> observer) {
    observer.onError(
        Status.UNIMPLEMENTED
            .withDescription("DetachSubscription is not supported by the embedded Pub/Sub server")
            .asRuntimeException());
  }
}
