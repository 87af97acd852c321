package dev.pubsubworker.embedded;

import com.google.protobuf.Empty;
import com.google.pubsub.v1.CommitSchemaRequest;
import com.google.pubsub.v1.CreateSchemaRequest;
import com.google.pubsub.v1.DeleteSchemaRequest;
import com.google.pubsub.v1.DeleteSchemaRevisionRequest;
import com.google.pubsub.v1.GetSchemaRequest;
import com.google.pubsub.v1.ListSchemaRevisionsRequest;
import com.google.pubsub.v1.ListSchemaRevisionsResponse;
import com.google.pubsub.v1.ListSchemasRequest;
import com.google.pubsub.v1.ListSchemasResponse;
import com.google.pubsub.v1.RollbackSchemaRequest;
import com.google.pubsub.v1.Schema;
import com.google.pubsub.v1.SchemaServiceGrpc;
import com.google.pubsub.v1.ValidateMessageRequest;
import com.google.pubsub.v1.ValidateMessageResponse;
import com.google.pubsub.v1.ValidateSchemaRequest;
import com.google.pubsub.v1.ValidateSchemaResponse;
import io.grpc.stub.StreamObserver;

/** The google.pubsub.v1.SchemaService over a {@link Broker}. */
final class SchemaService extends SchemaServiceGrpc.SchemaServiceImplBase {

  private final Broker broker;

  SchemaService(Broker broker) {
    this.broker = broker;
  }

  @Override
  public void createSchema(CreateSchemaRequest request, StreamObserver<Schema> observer) {
    Rpc.answer(observer, () -> broker.createSchema(request));
  }

  @Override
  public void getSchema(GetSchemaRequest request, StreamObserver<Schema> observer) {
    Rpc.answer(observer, () -> broker.getSchema(request));
  }

  @Override
  public void listSchemas(
      ListSchemasRequest request, StreamObserver<ListSchemasResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<Schema> page =
              Rpc.page(broker.listSchemas(request), request.getPageSize(), request.getPageToken());
          return ListSchemasResponse.newBuilder()
              .addAllSchemas(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void listSchemaRevisions(
      ListSchemaRevisionsRequest request, StreamObserver<ListSchemaRevisionsResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          Rpc.Page<Schema> page =
              Rpc.page(
                  broker.listSchemaRevisions(request),
                  request.getPageSize(),
                  request.getPageToken());
          return ListSchemaRevisionsResponse.newBuilder()
              .addAllSchemas(page.items())
              .setNextPageToken(page.nextToken())
              .build();
        });
  }

  @Override
  public void commitSchema(CommitSchemaRequest request, StreamObserver<Schema> observer) {
    Rpc.answer(observer, () -> broker.commitSchema(request));
  }

  @Override
  public void rollbackSchema(RollbackSchemaRequest request, StreamObserver<Schema> observer) {
    Rpc.answer(observer, () -> broker.rollbackSchema(request));
  }

  @Override
  public void deleteSchemaRevision(
      DeleteSchemaRevisionRequest request, StreamObserver<Schema> observer) {
    Rpc.answer(observer, () -> broker.deleteSchemaRevision(request));
  }

  @Override
  public void deleteSchema(DeleteSchemaRequest request, StreamObserver<Empty> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.deleteSchema(request.getName());
          return Empty.getDefaultInstance();
        });
  }

  @Override
  public void validateSchema(
      ValidateSchemaRequest request, StreamObserver<ValidateSchemaResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.validateSchema(request);
          return ValidateSchemaResponse.getDefaultInstance();
        });
  }

  @Override
  public void validateMessage(
      ValidateMessageRequest request, StreamObserver<ValidateMessageResponse> observer) {
    Rpc.answer(
        observer,
        () -> {
          broker.validateMessage(request);
          return ValidateMessageResponse.getDefaultInstance();
        });
  }
}
