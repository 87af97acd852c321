package dev.pubsubworker.backend.datastore;

import java.util.concurrent.atomic.LongAdder;

/** Counts the RPCs a backend issued, by method, so tests can pin the documented cost per verb. */
final class RpcCounters {

  /** A reading of the counters. */
  record Snapshot(long begin, long lookup, long commit, long rollback, long query) {

    /** The RPCs issued between {@code earlier} and this reading. */
    Snapshot minus(Snapshot earlier) {
      return new Snapshot(
          begin - earlier.begin,
          lookup - earlier.lookup,
          commit - earlier.commit,
          rollback - earlier.rollback,
          query - earlier.query);
    }

    /** All RPCs together. */
    long total() {
      return begin + lookup + commit + rollback + query;
    }
  }

  final LongAdder begin = new LongAdder();
  final LongAdder lookup = new LongAdder();
  final LongAdder commit = new LongAdder();
  final LongAdder rollback = new LongAdder();
  final LongAdder query = new LongAdder();

  Snapshot snapshot() {
    return new Snapshot(begin.sum(), lookup.sum(), commit.sum(), rollback.sum(), query.sum());
  }
}
