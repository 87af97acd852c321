/**
 * The in-memory lock store: for tests and single-process use. Depends only on {@code
 * dev.pubsubworker.core}.
 */
@NullMarked
package dev.pubsubworker.backend.memory;

import org.jspecify.annotations.NullMarked;
