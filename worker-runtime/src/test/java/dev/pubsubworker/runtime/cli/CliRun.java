package dev.pubsubworker.runtime.cli;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;

/** Runs the command line in-process and captures what it printed. */
record CliRun(int exitCode, String out, String err) {

  static CliRun of(String... args) {
    return withInput("", args);
  }

  static CliRun withInput(String input, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        WorkerCli.execute(
            args,
            new BufferedReader(new StringReader(input)),
            new PrintWriter(out, true),
            new PrintWriter(err, true));
    return new CliRun(code, out.toString(), err.toString());
  }
}
