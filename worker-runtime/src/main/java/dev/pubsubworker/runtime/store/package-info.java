/**
 * One Guice module per lock store, chosen by {@code lock-store.type}: each binds {@link
 * dev.pubsubworker.core.LockBackend} and {@link dev.pubsubworker.core.LockAdmin} to its backend,
 * created lazily when first injected. Modules only bind; the worker closes the backend at stop.
 */
package dev.pubsubworker.runtime.store;
