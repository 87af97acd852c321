package dev.pubsubworker.testservices;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Says which service {@link TestServicesExtension} injects into a parameter whose type does not
 * tell: a {@link SqlDatabase} ({@link ServiceKind#POSTGRES} or {@link ServiceKind#MARIADB}) or a
 * {@link DatastoreEmulator} ({@link ServiceKind#DATASTORE_EMULATOR} or {@link
 * ServiceKind#FIRESTORE_EMULATOR}). Optional on {@link RedisService} and {@link PubSubEmulator}
 * parameters.
 *
 * <pre>{@code
 * @Test
 * void roundTrip(@UseService(ServiceKind.MARIADB) SqlDatabase database) { ... }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface UseService {

  /** The service to inject; it must match the parameter's type. */
  ServiceKind value();
}
