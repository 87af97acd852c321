package dev.pubsubworker.embedded;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that injects a running {@link EmbeddedPubSub} into test constructors,
 * lifecycle methods ({@code @BeforeAll} included) and test methods. One server serves the whole
 * test class (each test class gets its own) and is closed after it; keep tests apart with fresh
 * topic and subscription names, and clear the faults a test sets ({@code
 * pubsub.faults().clearAll()}). Use it through {@link EmbeddedPubSubTest} or
 * {@code @ExtendWith(EmbeddedPubSubExtension.class)}.
 *
 * <p>The server listens on 127.0.0.1 on a free port with the system clock; its {@link
 * EmbeddedPubSub#hostPort()} is what a client or a worker takes as {@code PUBSUB_EMULATOR_HOST}.
 */
public final class EmbeddedPubSubExtension implements ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(EmbeddedPubSubExtension.class);

  /** Creates the extension (JUnit does). */
  public EmbeddedPubSubExtension() {}

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == EmbeddedPubSub.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    ExtensionContext classContext = context;
    while (classContext.getTestMethod().isPresent() && classContext.getParent().isPresent()) {
      classContext = classContext.getParent().get();
    }
    return classContext
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(
            EmbeddedPubSub.class, key -> EmbeddedPubSub.start(), EmbeddedPubSub.class);
  }
}
