package dev.pubsubworker.embedded;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.function.Supplier;

/** Answers unary calls: the value, or the status the broker threw. */
final class Rpc {

  private Rpc() {}

  static <T> void answer(StreamObserver<T> observer, Supplier<T> call) {
    T value;
    try {
      value = call.get();
    } catch (StatusRuntimeException e) {
      observer.onError(e);
      return;
    } catch (RuntimeException e) {
      observer.onError(
          Status.INTERNAL
              .withDescription("embedded Pub/Sub: " + e)
              .withCause(e)
              .asRuntimeException());
      return;
    }
    observer.onNext(value);
    observer.onCompleted();
  }

  /** One page of {@code all}: from the index in {@code token} (empty = 0), at most pageSize. */
  record Page<T>(List<T> items, String nextToken) {}

  static <T> Page<T> page(List<T> all, int pageSize, String token) {
    int from;
    try {
      from = token.isEmpty() ? 0 : Integer.parseInt(token);
    } catch (NumberFormatException e) {
      throw Validation.invalid("Invalid page_token: " + token);
    }
    if (pageSize < 0 || from < 0) {
      throw Validation.invalid("page_size and page_token must not be negative");
    }
    int size = pageSize == 0 ? Math.max(all.size(), 1) : pageSize;
    int to = Math.min(all.size(), from + size);
    List<T> items = from >= all.size() ? List.of() : all.subList(from, to);
    return new Page<>(items, to < all.size() ? Integer.toString(to) : "");
  }
}
