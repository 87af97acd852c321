package dev.pubsubworker.bench;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine;

/**
 * The benchmarks' command lines, read by picocli from each benchmark's {@code @Command} options
 * class: {@code --help} prints the usage and exits 0; an unknown option or a value that does not
 * parse prints one line naming it, then the usage, and exits 2, before anything is measured.
 */
final class BenchOptions {

  private BenchOptions() {}

  /** {@code -h}/{@code --help}, mixed into every benchmark's options. */
  static final class Help {
    @CommandLine.Option(
        names = {"-h", "--help"},
        usageHelp = true,
        description = "Print this and exit.")
    boolean requested;
  }

  /** Reads {@code args} into {@code options}, or exits as the class comment says. */
  static <T> T parseOrExit(T options, String[] args) {
    int exit =
        parse(options, args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
    if (exit >= 0) {
      System.exit(exit);
    }
    return options;
  }

  /**
   * Reads {@code args} into {@code options}.
   *
   * @return -1 to go on and measure; otherwise the exit code, after printing the usage to {@code
   *     out} (help) or the problem and the usage to {@code err}
   */
  static int parse(Object options, String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cl = new CommandLine(options);
    cl.registerConverter(Duration.class, BenchOptions::duration);
    try {
      cl.parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      err.println(cl.getCommandName() + ": " + e.getMessage());
      cl.usage(err);
      err.flush();
      return 2;
    }
    if (cl.isUsageHelpRequested()) {
      cl.usage(out);
      out.flush();
      return 0;
    }
    return -1;
  }

  /** A duration as the worker's config writes one: {@code 3s}, {@code 500ms}, {@code 2m}. */
  static Duration duration(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
    }
    return Duration.parse("PT" + t.toUpperCase(Locale.ROOT));
  }
}
