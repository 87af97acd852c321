/**
 * The assembled worker: builds the Guice injector from the runtime's module, the lock store's
 * module and every plugin's module; starts the subscriptions; stops gracefully.
 */
package dev.pubsubworker.runtime.worker;
