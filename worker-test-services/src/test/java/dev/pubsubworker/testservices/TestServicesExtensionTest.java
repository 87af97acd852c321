package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.abortedWithReason;
import static org.junit.platform.testkit.engine.EventConditions.container;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Parameter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class TestServicesExtensionTest {

  @Nested
  @ExtendWith(TestServicesExtension.class)
  class Injection {

    private final RedisService redisFromConstructor;

    Injection(RedisService redis) {
      this.redisFromConstructor = redis;
    }

    @Test
    void injects_the_shared_instances(
        RedisService redis,
        PubSubEmulator pubsub,
        @UseService(ServiceKind.POSTGRES) SqlDatabase postgres,
        @UseService(ServiceKind.MARIADB) SqlDatabase mariadb,
        @UseService(ServiceKind.FIRESTORE_EMULATOR) DatastoreEmulator firestore) {
      assertThat(redis).isSameAs(TestServices.redis()).isSameAs(redisFromConstructor);
      assertThat(pubsub).isSameAs(TestServices.pubsub());
      assertThat(postgres).isSameAs(TestServices.postgres());
      assertThat(mariadb).isSameAs(TestServices.mariadb());
      assertThat(firestore).isSameAs(TestServices.firestoreInDatastoreMode());
    }
  }

  @Test
  void ambiguous_types_need_use_service() throws Exception {
    Parameter[] parameters =
        Signatures.class
            .getDeclaredMethod(
                "sample", SqlDatabase.class, DatastoreEmulator.class, RedisService.class)
            .getParameters();

    assertThatThrownBy(() -> TestServicesExtension.kindOf(parameters[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "a SqlDatabase parameter needs @UseService to say which service: one of [POSTGRES,"
                + " MARIADB]");
    assertThatThrownBy(() -> TestServicesExtension.kindOf(parameters[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("DatastoreEmulator parameter needs @UseService");
    assertThatThrownBy(() -> TestServicesExtension.kindOf(parameters[2]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "@UseService(MARIADB) does not fit a RedisService parameter; it takes one of [REDIS]");
  }

  @Test
  void unavailable_service_aborts_the_test_outside_ci() {
    Events events = run(MethodScenario.class).testEvents();

    events.assertStatistics(stats -> stats.started(1).aborted(1).failed(0).succeeded(0));
    events
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                test("needs_pub_sub"),
                abortedWithReason(
                    instanceOf(TestAbortedException.class),
                    message(m -> m.startsWith("Pub/Sub emulator unavailable: install")))));
  }

  @Test
  void unavailable_service_fails_the_test_under_ci() {
    Events events = run(CiMethodScenario.class).testEvents();

    events.assertStatistics(stats -> stats.started(1).failed(1).aborted(0));
    events
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                test("needs_pub_sub"),
                finishedWithFailure(
                    instanceOf(AssertionFailedError.class),
                    message(m -> m.startsWith("Pub/Sub emulator unavailable: install")))));
  }

  @Test
  void unavailable_service_in_before_all_aborts_the_class() {
    EngineExecutionResults results = run(ClassScenario.class);

    results.testEvents().assertStatistics(stats -> stats.started(0));
    results
        .containerEvents()
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                container(ClassScenario.class),
                abortedWithReason(instanceOf(TestAbortedException.class))));
  }

  private static EngineExecutionResults run(Class<?> scenario) {
    return EngineTestKit.engine("junit-jupiter").selectors(selectClass(scenario)).execute();
  }

  /** An extension over an environment with the Cloud CLI hidden and no Docker. */
  static TestServicesExtension withoutEmulators(boolean ci) {
    Path workDir;
    try {
      workDir =
          Files.createDirectories(
              Path.of("target", "test-services", "extension-scenarios", ci ? "ci" : "local"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    TestEnvironments environment =
        new TestEnvironments(workDir).hideCloudSdk(workDir.resolve("no-sdk")).docker(false);
    if (ci) {
      environment.set("CI", "true");
    }
    return new TestServicesExtension(environment.registry());
  }

  /** Run only through {@link EngineTestKit}: its name does not end in "Test". */
  static class MethodScenario {
    @RegisterExtension static TestServicesExtension extension = withoutEmulators(false);

    @Test
    void needs_pub_sub(PubSubEmulator pubsub) {
      throw new AssertionError("must not run without the emulator: " + pubsub);
    }
  }

  /** {@link MethodScenario} under {@code CI=true}. */
  static class CiMethodScenario {
    @RegisterExtension static TestServicesExtension extension = withoutEmulators(true);

    @Test
    void needs_pub_sub(PubSubEmulator pubsub) {
      throw new AssertionError("must not run without the emulator: " + pubsub);
    }
  }

  /** Run only through {@link EngineTestKit}. */
  static class ClassScenario {
    @RegisterExtension static TestServicesExtension extension = withoutEmulators(false);

    @BeforeAll
    static void setUp(PubSubEmulator pubsub) {
      throw new AssertionError("must not run without the emulator: " + pubsub);
    }

    @Test
    void never_runs() {
      throw new AssertionError("must not run");
    }
  }

  @SuppressWarnings("unused")
  private static final class Signatures {
    void sample(
        SqlDatabase sql,
        DatastoreEmulator datastore,
        @UseService(ServiceKind.MARIADB) RedisService redis) {}
  }
}
