/**
 * The command line of the worker's executable jar (picocli): {@code run}, {@code check-config}, and
 * the operator tools. Expected errors print one line and exit non-zero; stack traces only with
 * {@code --verbose}.
 */
package dev.pubsubworker.runtime.cli;
