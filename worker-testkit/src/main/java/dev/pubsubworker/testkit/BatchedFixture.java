package dev.pubsubworker.testkit;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Runs a suite through a backend's batched path: a {@link BackendFixture} decorator whose backend
 * sends every {@code claim} and {@code complete} through {@link BatchLockBackend#claimAll} and
 * {@link BatchLockBackend#completeAll}, each time in a batch with up to three companion entries on
 * fresh keys at random positions, and checks that every companion claim was won. The contract, fuzz
 * and model suites then pin the batched verbs to exactly the semantics of the single ones:
 *
 * <pre>{@code
 * class RedisBatchedModelTest extends LockBackendModelContract {
 *   @Override
 *   protected BackendFixture createFixture() {
 *     return BatchedFixture.of(new RedisFixture("batched-model"));
 *   }
 * }
 * }</pre>
 *
 * {@code extend}, {@code release}, key rules, the admin view and {@link #writeRawRecord} go to the
 * backend (and its fixture) unchanged.
 */
public final class BatchedFixture implements BackendFixture {

  private final BackendFixture fixture;
  private final LockBackend batched;
  private final LockBackend batchedSecond;

  private BatchedFixture(BackendFixture fixture) {
    this.fixture = fixture;
    this.batched = route(fixture.backend());
    LockBackend second = fixture.secondInstance();
    this.batchedSecond = second == fixture.backend() ? batched : route(second);
  }

  /**
   * Wraps {@code fixture}, whose backend (and second instance) must implement {@link
   * BatchLockBackend}.
   *
   * @throws IllegalArgumentException if the backend does not
   */
  public static BatchedFixture of(BackendFixture fixture) {
    return new BatchedFixture(Objects.requireNonNull(fixture, "fixture"));
  }

  private static LockBackend route(LockBackend backend) {
    if (!(backend instanceof BatchLockBackend b)) {
      throw new IllegalArgumentException(
          backend.getClass().getName() + " does not implement BatchLockBackend");
    }
    return new ThroughBatches(b);
  }

  @Override
  public LockBackend backend() {
    return batched;
  }

  @Override
  public LockAdmin admin() {
    return fixture.admin();
  }

  @Override
  public void advanceClock(Duration amount) {
    fixture.advanceClock(amount);
  }

  @Override
  public LockBackend secondInstance() {
    return batchedSecond;
  }

  @Override
  public void writeRawRecord(String key, Map<String, String> fields) {
    fixture.writeRawRecord(key, fields);
  }

  @Override
  public void close() {
    fixture.close();
  }

  /** The single verbs of a backend, answered through its batch verbs. */
  private static final class ThroughBatches implements LockBackend {
    private final BatchLockBackend backend;
    private final String companionPrefix =
        "batch-companion-" + UUID.randomUUID().toString().substring(0, 8) + "-";

    ThroughBatches(BatchLockBackend backend) {
      this.backend = backend;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      int companions = Math.min(ThreadLocalRandom.current().nextInt(4), backend.maxBatchSize() - 1);
      int at = ThreadLocalRandom.current().nextInt(companions + 1);
      List<ClaimRequest> batch = new ArrayList<>();
      for (int i = 0; i < companions; i++) {
        batch.add(
            new ClaimRequest(
                companionPrefix + UUID.randomUUID(),
                request.lease(),
                request.ttl(),
                UUID.randomUUID().toString(),
                null));
      }
      batch.add(at, request);
      List<BatchResult<ClaimResult>> results = backend.claimAll(batch);
      if (results.size() != batch.size()) {
        throw new AssertionError(
            "claimAll returned " + results.size() + " results for " + batch.size() + " requests");
      }
      for (int i = 0; i < results.size(); i++) {
        if (i != at && !(results.get(i).get() instanceof ClaimResult.Won)) {
          throw new AssertionError(
              "a companion claim on a fresh key was not won: " + results.get(i));
        }
      }
      return results.get(at).get();
    }

    @Override
    public boolean complete(Claim claim, Duration ttl) {
      List<BatchResult<Boolean>> results =
          backend.completeAll(List.of(new CompleteRequest(claim, ttl)));
      if (results.size() != 1) {
        throw new AssertionError("completeAll returned " + results.size() + " results for 1");
      }
      return results.get(0).get();
    }

    @Override
    public void release(Claim claim) {
      backend.release(claim);
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
      return backend.extend(claim, lease);
    }

    @Override
    public int maxKeyBytes() {
      return backend.maxKeyBytes();
    }

    @Override
    public void validateKey(String key) {
      backend.validateKey(key);
    }
  }
}
