package dev.pubsubworker.embedded;

import com.google.protobuf.Any;
import com.google.protobuf.Empty;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.CreateSnapshotRequest;
import com.google.pubsub.v1.DeleteSnapshotRequest;
import com.google.pubsub.v1.DeleteSubscriptionRequest;
import com.google.pubsub.v1.GetSnapshotRequest;
import com.google.pubsub.v1.GetSubscriptionRequest;
import com.google.pubsub.v1.ListSnapshotsRequest;
import com.google.pubsub.v1.ListSnapshotsResponse;
import com.google.pubsub.v1.ListSubscriptionsRequest;
import com.google.pubsub.v1.ListSubscriptionsResponse;
import com.google.pubsub.v1.ModifyAckDeadlineRequest;
import com.google.pubsub.v1.ModifyPushConfigRequest;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.PullResponse;
import com.google.pubsub.v1.SeekRequest;
import com.google.pubsub.v1.SeekResponse;
import com.google.pubsub.v1.Snapshot;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.SubscriberGrpc;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.UpdateSnapshotRequest;
import com.google.pubsub.v1.UpdateSubscriptionRequest;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Instant;

/** The google.pubsub.v1.Subscriber service over a {@link Broker}. */
final class SubscriberService extends SubscriberGrpc.SubscriberImplBase {

  private final Broker broker;

  SubscriberService(Broker broker) {
    this.broker = broker;
  }

  @Override
  public void createSubscription(Subscription request, StreamObserver<Subscription> observer) {
    Rpc.answer(observer, () -> broker.createSubscription(request));
  }

  @Override
  public void getSubscription(
      GetSubscriptionRequest request, StreamObserver<Subscription> observer) {
    Rpc.answer(observer, () -> broker.getSubscription(request.getSubscription()));
  }

  @Override
  public void updateSubscription(
      UpdateSubscriptionRequest request, StreamObserver<Subscription> observer) {
    Rpc.answer(
        observer,
        () -> broker.updateSubscription(request.getSubscription(), request.getUpdateMask()));
  }

  @Override
  public void listSubscriptions(
      ListSubscriptionsRequest request, StreamObserver<ListSubscriptionsResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<Subscription> page =
              Rpc.page(
                  broker.listSubscriptions(request.getProject()),
                  request.getPageSize(),
                  request.getPageToken());
          return ListSubscriptionsResponse.newBuilder()
              .addAllSubscriptions(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void deleteSubscription(
      DeleteSubscriptionRequest request, StreamObserver<Empty> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.deleteSubscription(request.getSubscription());
          return Empty.getDefaultInstance();
        });
  }

  @Override
  public void modifyAckDeadline(ModifyAckDeadlineRequest request, StreamObserver<Empty> observer) {
    Broker.AckOutcome outcome;
    try {
      outcome =
          broker.modifyAckDeadline(
              request.getSubscription(), request.getAckIdsList(), request.getAckDeadlineSeconds());
    } catch (StatusRuntimeException e) {
      observer.onError(e);
      return;
    }
    reply(observer, outcome);
  }

  @Override
  public void acknowledge(AcknowledgeRequest request, StreamObserver<Empty> observer) {
    try {
      broker.acknowledge(
          request.getSubscription(), request.getAckIdsList(), outcome -> reply(observer, outcome));
    } catch (StatusRuntimeException e) {
      observer.onError(e);
    }
  }

  /**
   * Answers an ack or modack: success, the injected failure, or (exactly-once) INVALID_ARGUMENT
   * with an ErrorInfo whose metadata maps each failed ack id to its reason, as Pub/Sub does.
   */
  private static void reply(StreamObserver<Empty> observer, Broker.AckOutcome outcome) {
    if (outcome.failure() != null) {
      observer.onError(outcome.failure().asRuntimeException());
    } else if (!outcome.failedAckIds().isEmpty()) {
      ErrorInfo info =
          ErrorInfo.newBuilder()
              .setReason(Broker.EXACTLY_ONCE_FAILURE_REASON)
              .setDomain("pubsub.googleapis.com")
              .putAllMetadata(outcome.failedAckIds())
              .build();
      com.google.rpc.Status status =
          com.google.rpc.Status.newBuilder()
              .setCode(Code.INVALID_ARGUMENT_VALUE)
              .setMessage("Some acknowledgement ids in the request were invalid.")
              .addDetails(Any.pack(info))
              .build();
      observer.onError(StatusProto.toStatusRuntimeException(status));
    } else {
      observer.onNext(Empty.getDefaultInstance());
      observer.onCompleted();
    }
  }

  @Override
  public void pull(PullRequest request, StreamObserver<PullResponse> observer) {
    Rpc.answer(
        observer,
        () ->
            PullResponse.newBuilder()
                .addAllReceivedMessages(
                    broker.pull(request.getSubscription(), request.getMaxMessages()))
                .build());
  }

  @Override
  public StreamObserver<StreamingPullRequest> streamingPull(
      StreamObserver<StreamingPullResponse> responses) {
    ServerCallStreamObserver<StreamingPullResponse> observer =
        (ServerCallStreamObserver<StreamingPullResponse>) responses;
    return new StreamObserver<>() {
      private PullStream stream;

      {
        observer.setOnCancelHandler(
            () -> {
              if (stream != null) {
                broker.closeStream(stream, Status.CANCELLED);
              }
            });
        observer.setOnReadyHandler(
            () -> {
              if (stream != null) {
                broker.streamReady(stream);
              }
            });
      }

      @Override
      public void onNext(StreamingPullRequest request) {
        try {
          if (stream == null) {
            stream = broker.openStream(request, observer);
          } else {
            broker.handle(stream, request);
          }
        } catch (StatusRuntimeException e) {
          if (stream != null) {
            broker.closeStream(stream, e.getStatus());
          } else {
            observer.onError(e);
          }
        }
      }

      @Override
      public void onError(Throwable t) {
        if (stream != null) {
          broker.closeStream(stream, Status.CANCELLED);
        }
      }

      @Override
      public void onCompleted() {
        if (stream != null) {
          broker.closeStream(stream, Status.OK);
        } else {
          observer.onCompleted();
        }
      }
    };
  }

  @Override
  public void modifyPushConfig(ModifyPushConfigRequest request, StreamObserver<Empty> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.getSubscription(request.getSubscription());
          if (!request.getPushConfig().getPushEndpoint().isEmpty()) {
            throw Validation.invalid(
                "push subscriptions are not supported by the embedded Pub/Sub server");
          }
          return Empty.getDefaultInstance();
        });
  }

  @Override
  public void seek(SeekRequest request, StreamObserver<SeekResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          switch (request.getTargetCase()) {
            case TIME ->
                broker.seek(
                    request.getSubscription(),
                    Instant.ofEpochSecond(
                        request.getTime().getSeconds(), request.getTime().getNanos()));
            case SNAPSHOT ->
                broker.seekToSnapshot(request.getSubscription(), request.getSnapshot());
            default ->
                // The emulator's wording.
                throw Validation.invalid(
                    "No target was specified in the SeekRequest. Must specify either a time or a"
                        + " snapshot");
          }
          return SeekResponse.getDefaultInstance();
        });
  }

  @Override
  public void createSnapshot(CreateSnapshotRequest request, StreamObserver<Snapshot> observer) {
    Rpc.answer(observer, () -> broker.createSnapshot(request));
  }

  @Override
  public void getSnapshot(GetSnapshotRequest request, StreamObserver<Snapshot> observer) {
    Rpc.answer(observer, () -> broker.getSnapshot(request.getSnapshot()));
  }

  @Override
  public void listSnapshots(
      ListSnapshotsRequest request, StreamObserver<ListSnapshotsResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<Snapshot> page =
              Rpc.page(
                  broker.listSnapshots(request.getProject()),
                  request.getPageSize(),
                  request.getPageToken());
          return ListSnapshotsResponse.newBuilder()
              .addAllSnapshots(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void updateSnapshot(UpdateSnapshotRequest request, StreamObserver<Snapshot> observer) {
    Rpc.answer(
        observer, () -> broker.updateSnapshot(request.getSnapshot(), request.getUpdateMask()));
  }

  @Override
  public void deleteSnapshot(DeleteSnapshotRequest request, StreamObserver<Empty> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.deleteSnapshot(request.getSnapshot());
          return Empty.getDefaultInstance();
        });
  }
}
