package dev.pubsubworker.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.PropertyDefaults;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;
import org.opentest4j.TestAbortedException;

/**
 * A model-based property test every backend passes: random sequences of claim, complete, release,
 * extend, forget, purge and clock advances run against the backend and against {@link
 * ReferenceModel}, a plain model of the transition table of {@link LockBackend}. They must agree on
 * every return value, on every fence, and on every record's state after every step.
 *
 * <p>Times are whole multiples of 30 s on a virtual clock the fixture moves, so the few
 * milliseconds a real store spends per step can never flip a comparison. A record past its {@code
 * expiresAt} may have been reaped by the store (Redis expiry, a TTL policy): the property accepts
 * either, as invariant 4 does (a record is removed only after {@code expiresAt}).
 *
 * <p>A backend's test extends this class and supplies a {@link BackendFixture}; a slow store may
 * lower the number of tries with {@code @PropertyDefaults(tries = N)} on its subclass. The fixture
 * is created once per concrete class, before its property, and closed after its container.
 */
@PropertyDefaults(tries = 60)
@AddLifecycleHook(LockBackendModelContract.FixtureAvailability.class)
public abstract class LockBackendModelContract {

  /**
   * Opens the fixture before a property runs and skips the property when the fixture aborts (the
   * JUnit way of saying "this service is not here"). jqwik would otherwise count an abort inside a
   * property as a rejected try and fail it.
   */
  public static final class FixtureAvailability implements SkipExecutionHook {
    @Override
    public PropagationMode propagateTo() {
      return PropagationMode.ALL_DESCENDANTS;
    }

    @Override
    public SkipResult shouldBeSkipped(LifecycleContext context) {
      if (!(context instanceof PropertyLifecycleContext)) {
        return SkipResult.doNotSkip();
      }
      Class<?> container = context.optionalContainerClass().orElse(null);
      if (container == null || !LockBackendModelContract.class.isAssignableFrom(container)) {
        return SkipResult.doNotSkip();
      }
      try {
        ((LockBackendModelContract) context.newInstance(container)).openFixture();
      } catch (TestAbortedException e) {
        return SkipResult.skip(e.getMessage());
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("could not create the backend fixture", e);
      }
      return SkipResult.doNotSkip();
    }
  }

  private static final Map<Class<?>, BackendFixture> FIXTURES = new ConcurrentHashMap<>();
  private static final int KEYS = 2;
  private static final long SECOND = 1000;

  /** Creates the fixture; called once per concrete class, before its first try. */
  protected abstract BackendFixture createFixture() throws Exception;

  @AfterContainer
  static void closeFixtures() {
    FIXTURES.values().forEach(BackendFixture::close);
    FIXTURES.clear();
  }

  /**
   * Opens the fixture (once per concrete class). Called by {@link FixtureAvailability} before the
   * property, so that a fixture that cannot be had (a service that is unavailable) skips the
   * property on a laptop and fails it under {@code CI=true}, as it does any other test.
   */
  final void openFixture() throws Exception {
    if (!FIXTURES.containsKey(getClass())) {
      FIXTURES.put(getClass(), createFixture());
    }
  }

  private BackendFixture fixture() {
    return FIXTURES.get(getClass());
  }

  /** One step of a sequence. */
  sealed interface Step
      permits ClaimStep,
          CompleteStep,
          ReleaseStep,
          ExtendStep,
          ForgetStep,
          AdvanceStep,
          PurgeStep {}

  /** Claim key {@code key}; with {@code sameToken}, retry the key's last claim token. */
  record ClaimStep(int key, boolean sameToken, int leaseSeconds, int retentionSeconds)
      implements Step {}

  /** Complete the {@code claim}-th most recent won claim (0 = latest). */
  record CompleteStep(int claim, int ttlSeconds) implements Step {}

  /** Release the {@code claim}-th most recent won claim. */
  record ReleaseStep(int claim) implements Step {}

  /** Extend the {@code claim}-th most recent won claim. */
  record ExtendStep(int claim, int leaseSeconds) implements Step {}

  /** Forget key {@code key}. */
  record ForgetStep(int key) implements Step {}

  /** Move both clocks forward. */
  record AdvanceStep(int seconds) implements Step {}

  /** Purge every expired record. */
  record PurgeStep() implements Step {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Integer> key = Arbitraries.integers().between(0, KEYS - 1);
    Arbitrary<Integer> claimIndex = Arbitraries.integers().between(0, 6);
    Arbitrary<Step> claim =
        Combinators.combine(
                key,
                Arbitraries.of(false, false, true),
                Arbitraries.of(60, 120),
                Arbitraries.of(120, 300))
            .as(ClaimStep::new);
    Arbitrary<Step> complete =
        Combinators.combine(claimIndex, Arbitraries.of(90, 240)).as(CompleteStep::new);
    Arbitrary<Step> release = claimIndex.map(ReleaseStep::new);
    Arbitrary<Step> extend =
        Combinators.combine(claimIndex, Arbitraries.of(60, 120)).as(ExtendStep::new);
    Arbitrary<Step> forget = key.map(ForgetStep::new);
    Arbitrary<Step> advance = Arbitraries.of(30, 60, 90, 120, 300).map(AdvanceStep::new);
    Arbitrary<Step> purge = Arbitraries.just(new PurgeStep());
    return Arbitraries.frequencyOf(
            Tuple.of(6, claim),
            Tuple.of(3, complete),
            Tuple.of(2, release),
            Tuple.of(2, extend),
            Tuple.of(1, forget),
            Tuple.of(4, advance),
            Tuple.of(1, purge))
        .list()
        .ofMinSize(1)
        .ofMaxSize(30);
  }

  @Property
  void backend_agrees_with_the_reference_model(@ForAll("steps") List<Step> steps) {
    BackendFixture f = fixture();
    LockBackend backend = f.backend();
    LockAdmin admin = f.admin();
    String prefix = "model-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    ReferenceModel model = new ReferenceModel();
    List<Claim> history = new ArrayList<>();
    Map<Integer, String> lastToken = new HashMap<>();

    int n = 0;
    for (Step step : steps) {
      n++;
      String where = "step " + n + " " + step + " of " + steps;
      if (step instanceof ClaimStep s) {
        String key = prefix + s.key();
        syncReaped(model, admin, key);
        String token =
            s.sameToken() && lastToken.containsKey(s.key())
                ? lastToken.get(s.key())
                : UUID.randomUUID().toString();
        lastToken.put(s.key(), token);
        ClaimResult actual =
            backend.claim(
                new ClaimRequest(
                    key,
                    Duration.ofSeconds(s.leaseSeconds()),
                    Duration.ofSeconds(s.retentionSeconds()),
                    token,
                    null));
        ReferenceModel.Result expected =
            model.claim(key, token, s.leaseSeconds() * SECOND, s.retentionSeconds() * SECOND);
        assertThat(describe(actual)).as(where).isEqualTo(expected);
        if (actual instanceof ClaimResult.Won w) {
          history.add(w.claim());
        }
      } else if (step instanceof CompleteStep s) {
        Optional<Claim> c = pick(history, s.claim());
        if (c.isPresent()) {
          syncReaped(model, admin, c.get().key());
          boolean actual = backend.complete(c.get(), Duration.ofSeconds(s.ttlSeconds()));
          boolean expected =
              model.complete(c.get().key(), c.get().fence(), s.ttlSeconds() * SECOND);
          assertThat(actual).as(where).isEqualTo(expected);
        }
      } else if (step instanceof ReleaseStep s) {
        Optional<Claim> c = pick(history, s.claim());
        if (c.isPresent()) {
          syncReaped(model, admin, c.get().key());
          backend.release(c.get());
          model.release(c.get().key(), c.get().fence());
        }
      } else if (step instanceof ExtendStep s) {
        Optional<Claim> c = pick(history, s.claim());
        if (c.isPresent()) {
          syncReaped(model, admin, c.get().key());
          boolean actual = backend.extend(c.get(), Duration.ofSeconds(s.leaseSeconds()));
          boolean expected =
              model.extend(c.get().key(), c.get().fence(), s.leaseSeconds() * SECOND);
          assertThat(actual).as(where).isEqualTo(expected);
        }
      } else if (step instanceof ForgetStep s) {
        String key = prefix + s.key();
        syncReaped(model, admin, key);
        assertThat(admin.forget(key)).as(where).isEqualTo(model.forget(key));
      } else if (step instanceof AdvanceStep s) {
        f.advanceClock(Duration.ofSeconds(s.seconds()));
        model.advance(s.seconds() * SECOND);
      } else if (step instanceof PurgeStep) {
        int removed;
        do {
          removed = admin.purgeExpired(500);
        } while (removed == 500);
        model.purgeExpired();
      }
      for (int k = 0; k < KEYS; k++) {
        String key = prefix + k;
        syncReaped(model, admin, key);
        ReferenceModel.Rec expected = model.get(key);
        Optional<LockRecord> actual = admin.inspect(key);
        if (expected == null) {
          assertThat(actual).as(where + ": record of key " + k).isEmpty();
        } else {
          assertThat(actual).as(where + ": record of key " + k).isPresent();
          assertThat(actual.orElseThrow().state())
              .as(where + ": state of key " + k + ", model " + expected)
              .isEqualTo(expected.state);
          assertThat(actual.orElseThrow().fence())
              .as(where + ": fence of key " + k + ", model " + expected)
              .isEqualTo(expected.fence);
        }
      }
    }
  }

  /** A record past its expiresAt may be gone from the store; follow the store if it is. */
  private static void syncReaped(ReferenceModel model, LockAdmin admin, String key) {
    if (model.mayBeGone(key) && admin.inspect(key).isEmpty()) {
      model.drop(key);
    }
  }

  private static Optional<Claim> pick(List<Claim> history, int fromLatest) {
    if (history.isEmpty()) {
      return Optional.empty();
    }
    int index = history.size() - 1 - (fromLatest % history.size());
    return Optional.of(history.get(index));
  }

  private static ReferenceModel.Result describe(ClaimResult r) {
    if (r instanceof ClaimResult.Won w) {
      return ReferenceModel.Result.won(w.claim().fence());
    }
    return r instanceof ClaimResult.AlreadyDone
        ? ReferenceModel.Result.DONE
        : ReferenceModel.Result.HELD;
  }
}
