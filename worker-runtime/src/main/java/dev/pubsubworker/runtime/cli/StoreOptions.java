package dev.pubsubworker.runtime.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The options of the commands that operate on the configured lock store. */
final class StoreOptions {

  @Mixin ConfigSource config;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;
}
