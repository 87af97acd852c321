/**
 * Finds {@link dev.pubsubworker.api.WorkerPlugin}s on the class path and in the plugins folder (one
 * class loader per jar) and pairs each with its config subtree. Depends on the runtime's API and
 * config packages only.
 */
package dev.pubsubworker.runtime.plugin;
