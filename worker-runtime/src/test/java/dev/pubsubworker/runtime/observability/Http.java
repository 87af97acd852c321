package dev.pubsubworker.runtime.observability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A plain HTTP client for the observability endpoints. */
final class Http {

  /** One answer. */
  record Answer(int status, String contentType, String body) {}

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private Http() {}

  static Answer get(InetSocketAddress server, String path) {
    return send(server, path, "GET");
  }

  static Answer send(InetSocketAddress server, String path, String method) {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://" + server.getHostString() + ":" + server.getPort() + path))
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    try {
      HttpResponse<String> r = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
      return new Answer(
          r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
