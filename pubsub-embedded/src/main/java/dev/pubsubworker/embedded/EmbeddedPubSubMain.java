package dev.pubsubworker.embedded;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;

/**
 * The standalone server: {@code java -jar pubsub-embedded/target/pubsub-embedded.jar [--host H]
 * [--port P]} listens (default 127.0.0.1, port 8085), prints one line {@code embedded Pub/Sub
 * listening on HOST:PORT} and runs until SIGTERM or SIGINT. Bad arguments exit 2 with one line on
 * stderr; a port that cannot be bound exits 1.
 */
public final class EmbeddedPubSubMain {

  /** The port the standalone server takes without {@code --port}: the emulator's default. */
  static final int DEFAULT_PORT = 8085;

  private EmbeddedPubSubMain() {}

  /** Runs the server; see the class comment. */
  public static void main(String[] args) throws InterruptedException {
    EmbeddedPubSub.Builder builder = EmbeddedPubSub.newBuilder().setPort(DEFAULT_PORT);
    try {
      if (!parse(args, builder, System.out)) {
        return;
      }
    } catch (IllegalArgumentException e) {
      System.err.println("pubsub-embedded: " + e.getMessage());
      System.exit(2);
      return;
    }
    EmbeddedPubSub server;
    try {
      server = builder.start();
    } catch (RuntimeException e) {
      System.err.println("pubsub-embedded: " + e.getMessage());
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  stopped.countDown();
                },
                "embedded-pubsub-shutdown"));
    System.out.println("embedded Pub/Sub listening on " + server.hostPort());
    System.out.flush();
    stopped.await();
  }

  /**
   * Applies {@code args} to {@code builder}; false when only help was asked for.
   *
   * @throws IllegalArgumentException naming the bad argument
   */
  static boolean parse(String[] args, EmbeddedPubSub.Builder builder, PrintStream out) {
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--help", "-h" -> {
          out.println(
              "usage: java -jar pubsub-embedded.jar [--host HOST] [--port PORT]   (defaults"
                  + " 127.0.0.1, "
                  + DEFAULT_PORT
                  + "; 0 = a free port)");
          return false;
        }
        case "--port" -> builder.setPort(port(value(args, ++i, arg)));
        case "--host" -> builder.setHost(value(args, ++i, arg));
        default -> {
          if (arg.startsWith("--port=")) {
            builder.setPort(port(arg.substring("--port=".length())));
          } else if (arg.startsWith("--host=")) {
            builder.setHost(arg.substring("--host=".length()));
          } else {
            throw new IllegalArgumentException(
                "unknown argument '" + arg + "' (expected --host HOST, --port PORT or --help)");
          }
        }
      }
    }
    return true;
  }

  private static String value(String[] args, int index, String option) {
    if (index >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[index];
  }

  private static int port(String text) {
    try {
      int port = Integer.parseInt(text);
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("--port must be within 0..65535, but was " + text);
      }
      return port;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--port must be a number, but was '" + text + "'");
    }
  }
}
