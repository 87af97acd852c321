package dev.pubsubworker.core;

/**
 * What the guard does when a delivery's payload fingerprint differs from the fingerprint stored for
 * its key (on a DONE record, or a live claim). Fingerprints are compared only when both are
 * present.
 */
public enum FingerprintPolicy {
  /**
   * Log a warning, tell the {@link GuardListener}, and carry on as if the fingerprints matched (a
   * DONE key is still a duplicate). The default.
   */
  REPORT,
  /** Also report, then throw {@link FingerprintMismatchException} instead of the usual outcome. */
  REJECT
}
