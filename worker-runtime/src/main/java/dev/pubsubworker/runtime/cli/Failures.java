package dev.pubsubworker.runtime.cli;

import com.google.inject.ProvisionException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.KnownSecrets;
import dev.pubsubworker.runtime.config.LockStoreConfig;
import dev.pubsubworker.runtime.pubsub.SubscriptionUnavailableException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * Turns an exception into the one-line error and exit code every command shares, the runtime's and
 * those an application adds.
 */
public final class Failures {

  private Failures() {}

  /**
   * Prints {@code e} for an operator: one line per configuration problem, else one line; the stack
   * trace only when verbose. Every configured secret in it is masked ({@link KnownSecrets}).
   *
   * @return the exit code: {@link ExitCodes#BAD_CONFIG} for a configuration problem, {@link
   *     ExitCodes#UNAVAILABLE} for a subscription, lock store or port it cannot have, else {@link
   *     ExitCodes#FAILURE}
   */
  public static int report(Throwable thrown, PrintWriter err, boolean verbose) {
    return report(thrown, err, verbose, null);
  }

  /**
   * As {@link #report(Throwable, PrintWriter, boolean)}, naming {@code store} (see {@link
   * dev.pubsubworker.runtime.config.LockStoreConfig#where()}) in a lock-store failure's line.
   */
  static int report(Throwable thrown, PrintWriter err, boolean verbose, LockStoreConfig store) {
    // Rendered into a buffer and printed masked: a driver's message or a stack trace can quote a
    // configured password.
    StringWriter buffer = new StringWriter();
    PrintWriter text = new PrintWriter(buffer);
    int code = render(thrown, text, verbose, store);
    text.flush();
    err.print(KnownSecrets.mask(buffer.toString()));
    err.flush();
    return code;
  }

  private static int render(
      Throwable thrown, PrintWriter err, boolean verbose, LockStoreConfig store) {
    Throwable e = unwrap(thrown);
    if (e instanceof InvalidConfigException invalid) {
      err.println("error: " + invalid.getMessage());
    } else if (e instanceof LockBackendException && store != null) {
      err.println("error: lock store " + store.where() + ": " + e.getMessage() + cause(e));
    } else if (e instanceof SubscriptionUnavailableException || e instanceof LockBackendException) {
      err.println("error: " + e.getMessage() + cause(e));
    } else if (e instanceof UncheckedIOException && e.getMessage() != null) {
      // Its message names what failed; the cause's text only if it does not already end with it.
      String cause = cause(e);
      err.println(
          "error: "
              + e.getMessage()
              + (cause.isEmpty() || e.getMessage().endsWith(cause.substring(2)) ? "" : cause));
    } else {
      err.println("error: " + e + cause(e));
    }
    if (verbose) {
      e.printStackTrace(err);
    } else if (!(e instanceof InvalidConfigException)) {
      err.println("(run with --verbose for the stack trace)");
    }
    if (e instanceof InvalidConfigException) {
      return ExitCodes.BAD_CONFIG;
    }
    if (unavailable(e)) {
      return ExitCodes.UNAVAILABLE;
    }
    return ExitCodes.FAILURE;
  }

  /**
   * A command-line argument that cannot be used: one plain line, exit {@link ExitCodes#BAD_CONFIG}.
   */
  static int badArgument(PrintWriter err, String problem) {
    err.println("error: " + KnownSecrets.mask(problem));
    err.flush();
    return ExitCodes.BAD_CONFIG;
  }

  /**
   * Guice wraps what a provider threw (the lock store failing to open, say) in a {@code
   * ProvisionException}; the operator needs the store's own error.
   */
  private static Throwable unwrap(Throwable e) {
    Throwable current = e;
    while (current instanceof ProvisionException && current.getCause() != null) {
      current = current.getCause();
    }
    return current;
  }

  /** A dependency (subscription, lock store, the HTTP port) that cannot be had right now. */
  private static boolean unavailable(Throwable e) {
    return e instanceof SubscriptionUnavailableException
        || e instanceof LockBackendException
        || e instanceof UncheckedIOException;
  }

  private static String cause(Throwable e) {
    Throwable root = e.getCause();
    if (root == null) {
      return "";
    }
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String text = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return ": " + text.lines().findFirst().orElse("");
  }
}
