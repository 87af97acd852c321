package dev.pubsubworker.embedded;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a JUnit 5 test class whose constructor, lifecycle and test methods may take an {@link
 * EmbeddedPubSub} parameter: one running server per test class, see {@link
 * EmbeddedPubSubExtension}.
 *
 * <pre>{@code
 * @EmbeddedPubSubTest
 * class OrdersHandlerTest {
 *   @Test
 *   void handles(EmbeddedPubSub pubsub) {
 *     // point the Publisher/Subscriber (or the worker) at pubsub.hostPort()
 *   }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ExtendWith(EmbeddedPubSubExtension.class)
public @interface EmbeddedPubSubTest {}
