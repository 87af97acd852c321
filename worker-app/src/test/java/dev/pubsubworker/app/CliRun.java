package dev.pubsubworker.app;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;

/** Runs the app's command line in-process and captures what it printed. */
record CliRun(int exitCode, String out, String err) {

  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        WorkerApp.execute(
            args,
            new BufferedReader(new StringReader("")),
            new PrintWriter(out, true),
            new PrintWriter(err, true));
    return new CliRun(code, out.toString(), err.toString());
  }
}
