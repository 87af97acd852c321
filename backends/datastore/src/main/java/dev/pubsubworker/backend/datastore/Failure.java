package dev.pubsubworker.backend.datastore;

import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.datastore.DatastoreException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;

/**
 * What kind of failure a Datastore error is, decided in this one place from its status code (never
 * from message text), so that every verb retries the same errors the same way.
 */
enum Failure {
  /**
   * ABORTED: the transaction lost a race, either at commit (the Datastore emulator's and legacy
   * Datastore's optimistic concurrency) or waiting for a lock ("Transaction lock timeout" under
   * Firestore in Datastore mode's pessimistic concurrency). Retried with backoff; the outcome is
   * "not written".
   */
  CONTENTION,
  /**
   * UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED: the service is unreachable,
   * overloaded or slow. Retried with backoff within the same budget; a commit that failed this way
   * may or may not have been applied, which every verb tolerates (the claim token, the fence).
   */
  TRANSIENT,
  /** Anything else (permission, invalid argument, a closed client, ...): not retried. */
  PERMANENT;

  /**
   * Classifies a throwable from the Datastore client by the first status code in its cause chain
   * (or, for the HTTP transport's I/O failures, by the exception's type).
   */
  static Failure classify(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof ApiException api && api.getStatusCode() != null) {
        return of(api.getStatusCode().getCode());
      }
      if (t instanceof StatusRuntimeException sre) {
        return of(StatusCode.Code.valueOf(sre.getStatus().getCode().name()));
      }
      if (t instanceof DatastoreException de && de.getCode() > 0) {
        // The client reports google.rpc.Code numbers, which are gRPC status code values.
        Status.Code code = Status.fromCodeValue(de.getCode()).getCode();
        return of(StatusCode.Code.valueOf(code.name()));
      }
      if (t instanceof com.google.datastore.v1.client.DatastoreException de
          && de.getCode() != null
          && de.getCode() != com.google.rpc.Code.UNRECOGNIZED) {
        Status.Code code = Status.fromCodeValue(de.getCode().getNumber()).getCode();
        return of(StatusCode.Code.valueOf(code.name()));
      }
      if (t instanceof IOException) {
        // The HTTP transport could not connect, or the connection broke or timed out.
        return TRANSIENT;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return PERMANENT;
  }

  /** The failure kind of a gRPC status code. */
  static Failure of(StatusCode.Code code) {
    return switch (code) {
      case ABORTED -> CONTENTION;
      case UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED -> TRANSIENT;
      default -> PERMANENT;
    };
  }
}
