package dev.pubsubworker.testservices;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestInstanceFactoryContext;
import org.junit.jupiter.api.extension.TestInstancePreConstructCallback;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;

/**
 * Injects test services into constructor, lifecycle-method and test-method parameters of type
 * {@link RedisService}, {@link PubSubEmulator}, {@link SqlDatabase} and {@link DatastoreEmulator};
 * the last two need {@link UseService} to say which one.
 *
 * <pre>{@code
 * @ExtendWith(TestServicesExtension.class)
 * class OrdersTest {
 *   @Test
 *   void stores(@UseService(ServiceKind.POSTGRES) SqlDatabase db, PubSubEmulator pubsub) { ... }
 * }
 * }</pre>
 *
 * <p>The instances are those of {@link TestServices}. A service that cannot be had aborts (skips)
 * the test — or the whole class, when a constructor or {@code @BeforeAll} parameter needs it — and
 * fails it under {@code CI=true}, with the line described in {@link TestServices}. (JUnit wraps
 * anything a parameter resolver throws as an error, so the extension resolves the services a test
 * needs in its callbacks first, where a skip is still a skip.)
 *
 * <p>Thread-safe.
 */
public final class TestServicesExtension
    implements ParameterResolver,
        TestInstancePreConstructCallback,
        BeforeAllCallback,
        BeforeEachCallback {

  private static final Map<Class<?>, Set<ServiceKind>> KINDS_BY_TYPE =
      Map.of(
          RedisService.class, Set.of(ServiceKind.REDIS),
          PubSubEmulator.class, Set.of(ServiceKind.PUBSUB_EMULATOR),
          SqlDatabase.class, Set.of(ServiceKind.POSTGRES, ServiceKind.MARIADB),
          DatastoreEmulator.class,
              Set.of(ServiceKind.DATASTORE_EMULATOR, ServiceKind.FIRESTORE_EMULATOR));

  private final ServiceRegistry registry;

  /** Creates the extension over {@link TestServices}; JUnit does this for {@code @ExtendWith}. */
  public TestServicesExtension() {
    this(TestServices.registry());
  }

  /** Over another registry, for testing the extension itself. */
  TestServicesExtension(ServiceRegistry registry) {
    this.registry = registry;
  }

  @Override
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return KINDS_BY_TYPE.containsKey(parameterContext.getParameter().getType());
  }

  @Override
  public Object resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    try {
      return registry.get(kindOf(parameterContext.getParameter()));
    } catch (IllegalArgumentException e) {
      throw new ParameterResolutionException(e.getMessage(), e);
    }
  }

  @Override
  public void preConstructTestInstance(
      TestInstanceFactoryContext factoryContext, ExtensionContext context) {
    Constructor<?>[] constructors = factoryContext.getTestClass().getDeclaredConstructors();
    if (constructors.length == 1) {
      prepare(constructors[0]);
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    Class<?> testClass = context.getRequiredTestClass();
    lifecycleMethods(testClass, List.of(BeforeAll.class, AfterAll.class)).forEach(this::prepare);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    Optional<Method> testMethod = context.getTestMethod();
    testMethod.ifPresent(this::prepare);
    context
        .getTestClass()
        .ifPresent(
            testClass ->
                lifecycleMethods(testClass, List.of(BeforeEach.class, AfterEach.class))
                    .forEach(this::prepare));
  }

  /**
   * Resolves every service {@code executable}'s parameters need, so an unavailable one aborts (or
   * fails) here with its own exception rather than inside parameter resolution.
   */
  private void prepare(Executable executable) {
    for (Parameter parameter : executable.getParameters()) {
      if (KINDS_BY_TYPE.containsKey(parameter.getType())) {
        try {
          registry.get(kindOf(parameter));
        } catch (IllegalArgumentException e) {
          // Reported by resolveParameter, with JUnit's context.
        }
      }
    }
  }

  private static List<Method> lifecycleMethods(
      Class<?> testClass, List<Class<? extends java.lang.annotation.Annotation>> annotations) {
    return annotations.stream()
        .flatMap(
            annotation ->
                AnnotationSupport.findAnnotatedMethods(
                    testClass, annotation, HierarchyTraversalMode.TOP_DOWN)
                    .stream())
        .toList();
  }

  /**
   * The service kind for a parameter: from {@link UseService}, or from the type when only one kind
   * has it.
   *
   * @throws IllegalArgumentException when the type is ambiguous without {@link UseService}, or the
   *     annotation names a kind of another type
   */
  static ServiceKind kindOf(Parameter parameter) {
    Set<ServiceKind> candidates = KINDS_BY_TYPE.get(parameter.getType());
    String type = parameter.getType().getSimpleName();
    UseService annotation = parameter.getAnnotation(UseService.class);
    if (annotation != null) {
      if (!candidates.contains(annotation.value())) {
        throw new IllegalArgumentException(
            "@UseService("
                + annotation.value()
                + ") does not fit a "
                + type
                + " parameter; it takes one of "
                + candidates);
      }
      return annotation.value();
    }
    if (candidates.size() != 1) {
      throw new IllegalArgumentException(
          "a "
              + type
              + " parameter needs @UseService to say which service: one of "
              + candidates.stream().sorted().toList());
    }
    return candidates.iterator().next();
  }
}
