/**
 * The {@code demo} command's machinery: the embedded Pub/Sub server (or Google's emulators started
 * on free ports), the example orders plugin with failure injection, a load generator with duplicate
 * publishes and crashed holders, a live progress line and the exactly-once summary. Depends on the
 * runtime; nothing depends on it but the app's {@code demo} command.
 */
package dev.pubsubworker.app.demo;
