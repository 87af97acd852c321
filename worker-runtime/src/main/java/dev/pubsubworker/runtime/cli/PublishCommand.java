package dev.pubsubworker.runtime.cli;

import com.google.api.core.ApiFuture;
import com.google.api.gax.retrying.RetrySettings;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.pubsub.AdminCalls;
import dev.pubsubworker.runtime.pubsub.PubSubConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code publish}: sends test messages to a topic of the configured project — a tool for checking a
 * deployment. {@code {n}} in the data, attributes and ordering key becomes the message's number
 * (1..count), so {@code --count 100 --data '{"orderId":"po-{n}"}' -a order_id=po-{n}} sends 100
 * distinct orders; {@code --duplicates 0.2} then publishes a fifth of them again (same content, a
 * new message id), as an overlapping producer would.
 *
 * <p>Bounded: Pub/Sub must accept every message within {@code --timeout} (30 s by default), else
 * the command fails with one line and exit 3, as it does when Pub/Sub refuses them.
 */
@Command(
    name = "publish",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Publish test messages to a topic (data from --data, a file, or stdin).")
final class PublishCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigSource config;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;

  @Option(
      names = {"-t", "--topic"},
      required = true,
      description = "Topic id in the configured project, or projects/P/topics/T.")
  String topic;

  @ArgGroup(exclusive = true)
  DataSource data = new DataSource();

  static final class DataSource {
    @Option(
        names = {"-d", "--data"},
        description = "The payload text ({n} is the message number).")
    String text;

    @Option(
        names = "--data-file",
        paramLabel = "FILE",
        description = "Read the payload from FILE, or from stdin with '-'.")
    String file;
  }

  @Option(
      names = {"-a", "--attribute"},
      paramLabel = "KEY=VALUE",
      description = "An attribute (repeatable; {n} is the message number).")
  Map<String, String> attributes = new LinkedHashMap<>();

  @Option(names = "--ordering-key", description = "The ordering key ({n} is the message number).")
  String orderingKey;

  @Option(
      names = {"-n", "--count"},
      defaultValue = "1",
      description = "How many messages (default: ${DEFAULT-VALUE}).")
  int count;

  @Option(
      names = "--duplicates",
      defaultValue = "0",
      description =
          "Share of the messages to publish a second time, 0..1 (default: ${DEFAULT-VALUE}).")
  double duplicates;

  @Option(
      names = "--timeout",
      defaultValue = "30s",
      paramLabel = "DURATION",
      description =
          "How long Pub/Sub may take to accept every message, e.g. 30s or 2m (default:"
              + " ${DEFAULT-VALUE}); then the command fails with exit 3.")
  String timeout;

  /** What {@code --timeout} accepts: a whole number and a unit. */
  private static final java.util.regex.Pattern DURATION =
      java.util.regex.Pattern.compile("([0-9]{1,9})(ms|s|m)");

  /**
   * The client's own retry bound can be no shorter than this (google-cloud-pubsub refuses less); a
   * shorter {@code --timeout} is kept by the wait for the results.
   */
  private static final Duration CLIENT_MIN_TOTAL_TIMEOUT = Duration.ofSeconds(10);

  /** Whom the messages go to, for error lines. */
  private String where = "Pub/Sub";

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (count < 1 || duplicates < 0 || duplicates > 1) {
      spec.commandLine().getErr().println("error: --count must be >= 1 and --duplicates in 0..1");
      return ExitCodes.BAD_CONFIG;
    }
    Duration bound = parseTimeout(timeout);
    if (bound == null) {
      return Failures.badArgument(
          spec.commandLine().getErr(),
          "--timeout must be a positive whole number of ms, s or m (such as 30s), but was '"
              + timeout
              + "'");
    }
    byte[] payload;
    try {
      payload = payload();
    } catch (IOException e) {
      return Failures.badArgument(
          spec.commandLine().getErr(), "--data-file " + data.file + ": " + readProblem(e));
    }
    try {
      WorkerConfig settings = config.load();
      TopicName topicName =
          topic.startsWith("projects/")
              ? TopicName.parse(topic)
              : TopicName.of(settings.projectId(), topic);
      List<Integer> numbers = new ArrayList<>();
      for (int n = 1; n <= count; n++) {
        numbers.add(n);
      }
      Random random = new Random();
      int repeats = (int) Math.round(duplicates * count);
      for (int i = 0; i < repeats; i++) {
        numbers.add(1 + random.nextInt(count));
      }
      where =
          settings.pubsubEmulatorHost().map(h -> "the Pub/Sub emulator at " + h).orElse("Pub/Sub");
      try (PubSubConnection connection = PubSubConnection.create(settings.pubsubEmulatorHost())) {
        Publisher publisher =
            connection
                .publisher(topicName)
                .setEnableMessageOrdering(orderingKey != null)
                .setRetrySettings(retries(bound))
                .build();
        long deadline = System.nanoTime() + bound.toNanos();
        try {
          List<ApiFuture<String>> sent = new ArrayList<>();
          for (int n : numbers) {
            sent.add(publisher.publish(message(payload, n)));
          }
          for (ApiFuture<String> f : sent) {
            // The client's retries end at the bound too, except with an ordering key (it retries
            // those forever): this wait keeps the bound either way.
            f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          }
        } finally {
          publisher.shutdown();
          // After a failure nothing is left to send; what could not be sent is given up.
          publisher.awaitTermination(5, TimeUnit.SECONDS);
        }
      }
      out.printf(
          "published %d message(s)%s to %s%n",
          count, repeats == 0 ? "" : " and " + repeats + " duplicate publish(es)", topicName);
      out.flush();
      return ExitCodes.OK;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Failures.report(e, spec.commandLine().getErr(), verbose);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ApiException api) {
        return unavailable(api);
      }
      return Failures.report(e.getCause(), spec.commandLine().getErr(), verbose);
    } catch (TimeoutException e) {
      PrintWriter err = spec.commandLine().getErr();
      err.println(
          "error: publishing to topic "
              + topic
              + " failed: "
              + where
              + " did not accept the messages within "
              + timeout
              + " (--timeout); is it running and reachable?");
      err.flush();
      return ExitCodes.UNAVAILABLE;
    } catch (ApiException e) {
      return unavailable(e);
    } catch (Exception e) {
      return Failures.report(e, spec.commandLine().getErr(), verbose);
    }
  }

  private byte[] payload() throws IOException {
    if (data.text != null) {
      return data.text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    if (data.file == null) {
      return new byte[0];
    }
    if (data.file.equals("-")) {
      InputStream in = System.in;
      return in.readAllBytes();
    }
    Path file = Path.of(data.file);
    if (Files.isDirectory(file)) {
      throw new IOException("is a folder, not a file");
    }
    return Files.readAllBytes(file);
  }

  /** {@code --timeout}'s duration, or null if it is not one. */
  private static Duration parseTimeout(String text) {
    java.util.regex.Matcher m = DURATION.matcher(text.trim());
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    Duration d =
        switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          default -> Duration.ofMinutes(n);
        };
    return d.isZero() ? null : d;
  }

  /**
   * The client's retries (its defaults, 600 s in all) bounded by {@code bound}: a publish against a
   * Pub/Sub that does not answer gives up then instead of waiting ten minutes.
   */
  private static RetrySettings retries(Duration bound) {
    Duration total =
        bound.compareTo(CLIENT_MIN_TOTAL_TIMEOUT) < 0 ? CLIENT_MIN_TOTAL_TIMEOUT : bound;
    return RetrySettings.newBuilder()
        .setTotalTimeoutDuration(total)
        .setInitialRetryDelayDuration(Duration.ofMillis(100))
        .setRetryDelayMultiplier(2)
        .setMaxRetryDelayDuration(Duration.ofSeconds(5))
        .setInitialRpcTimeoutDuration(Duration.ofSeconds(5))
        .setRpcTimeoutMultiplier(2)
        .setMaxRpcTimeoutDuration(total)
        .build();
  }

  /** Pub/Sub refused or could not be reached: one line with its status, exit 3. */
  private int unavailable(ApiException e) {
    PrintWriter err = spec.commandLine().getErr();
    // gax puts the gRPC exception's toString in the message; the operator needs its text only.
    String message = AdminCalls.statusText(e);
    StatusCode.Code code = e.getStatusCode().getCode();
    boolean unreachable =
        code == StatusCode.Code.UNAVAILABLE || code == StatusCode.Code.DEADLINE_EXCEEDED;
    err.println(
        "error: publishing to topic "
            + topic
            + " failed: "
            + code
            + (message.isEmpty() ? "" : " (" + message + ")")
            + (unreachable
                ? ": " + where + " did not accept the messages within " + timeout + " (--timeout)"
                : ""));
    if (verbose) {
      e.printStackTrace(err);
    }
    err.flush();
    return ExitCodes.UNAVAILABLE;
  }

  private static String readProblem(IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "cannot be read (permission denied)";
    }
    return e.getMessage() == null ? "cannot be read" : "cannot be read: " + e.getMessage();
  }

  private PubsubMessage message(byte[] payload, int n) {
    String number = Integer.toString(n);
    PubsubMessage.Builder m = PubsubMessage.newBuilder();
    String text = new String(payload, java.nio.charset.StandardCharsets.UTF_8);
    m.setData(
        text.contains("{n}")
            ? ByteString.copyFromUtf8(text.replace("{n}", number))
            : ByteString.copyFrom(payload));
    attributes.forEach(
        (k, v) -> m.putAttributes(k.replace("{n}", number), v.replace("{n}", number)));
    if (orderingKey != null) {
      m.setOrderingKey(orderingKey.replace("{n}", number));
    }
    return m.build();
  }
}
