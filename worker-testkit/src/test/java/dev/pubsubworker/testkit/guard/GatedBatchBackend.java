package dev.pubsubworker.testkit.guard;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackendException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The in-memory backend's batch verbs, instrumented: counts single and batch calls, records the
 * keys of every batch, and lets a test hold a call open (a gate) or fail a whole round trip.
 */
final class GatedBatchBackend implements BatchLockBackend {

  final InMemoryLockBackend store = new InMemoryLockBackend();
  final AtomicInteger singleClaims = new AtomicInteger();
  final AtomicInteger singleCompletes = new AtomicInteger();
  final List<List<String>> claimBatches = new CopyOnWriteArrayList<>();
  final List<List<String>> completeBatches = new CopyOnWriteArrayList<>();
  final AtomicInteger releases = new AtomicInteger();

  /** A single claim of this key waits, before it writes, until {@link #singleGate} opens. */
  volatile String holdSingleClaimOf;

  final CountDownLatch singleEntered = new CountDownLatch(1);
  final CountDownLatch singleGate = new CountDownLatch(1);

  /** A single claim of a key in this map waits, before it writes, until the key's gate opens. */
  final Map<String, CountDownLatch> singleClaimGates = new ConcurrentHashMap<>();

  /** One permit per single claim that entered its {@link #singleClaimGates} gate. */
  final Semaphore gatedSinglesEntered = new Semaphore(0);

  /** If set, the next claim batch waits, after it wrote, until {@link #batchGate} opens. */
  volatile boolean holdNextClaimBatch;

  final CountDownLatch batchEntered = new CountDownLatch(1);
  final CountDownLatch batchGate = new CountDownLatch(1);

  /** If set, the next claim batch fails as a whole, before it writes. */
  final AtomicReference<LockBackendException> failNextClaimBatch = new AtomicReference<>();

  private final int maxBatch;
  private final int maxConcurrent;

  /** A backend that takes one flush per verb at a time. */
  GatedBatchBackend(int maxBatch) {
    this(maxBatch, 1);
  }

  GatedBatchBackend(int maxBatch, int maxConcurrent) {
    this.maxBatch = maxBatch;
    this.maxConcurrent = maxConcurrent;
  }

  @Override
  public int maxBatchSize() {
    return maxBatch;
  }

  @Override
  public int maxConcurrentBatches() {
    return maxConcurrent;
  }

  @Override
  public int maxKeyBytes() {
    return store.maxKeyBytes();
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    singleClaims.incrementAndGet();
    if (request.key().equals(holdSingleClaimOf)) {
      singleEntered.countDown();
      await(singleGate);
    }
    CountDownLatch gate = singleClaimGates.get(request.key());
    if (gate != null) {
      gatedSinglesEntered.release();
      await(gate);
    }
    return store.claim(request);
  }

  @Override
  public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
    claimBatches.add(requests.stream().map(ClaimRequest::key).toList());
    LockBackendException failure = failNextClaimBatch.getAndSet(null);
    if (failure != null) {
      throw failure;
    }
    List<BatchResult<ClaimResult>> results = store.claimAll(requests);
    if (holdNextClaimBatch) {
      holdNextClaimBatch = false;
      batchEntered.countDown();
      await(batchGate);
    }
    return results;
  }

  @Override
  public boolean complete(Claim claim, Duration ttl) {
    singleCompletes.incrementAndGet();
    return store.complete(claim, ttl);
  }

  @Override
  public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
    completeBatches.add(requests.stream().map(r -> r.claim().key()).toList());
    return store.completeAll(requests);
  }

  @Override
  public void release(Claim claim) {
    releases.incrementAndGet();
    store.release(claim);
  }

  @Override
  public boolean extend(Claim claim, Duration lease) {
    return store.extend(claim, lease);
  }

  private static void await(CountDownLatch gate) {
    // Uninterruptible on purpose: a store call in flight does not notice its caller's interrupt.
    boolean interrupted = false;
    while (true) {
      try {
        if (!gate.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never opened the gate");
        }
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
