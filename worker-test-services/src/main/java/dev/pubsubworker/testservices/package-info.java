/**
 * Test services: real Redis, PostgreSQL, MariaDB and Google's Pub/Sub, Datastore and
 * Firestore-in-Datastore-mode emulators for tests, started on demand.
 *
 * <p>Entry points: the static accessors of {@link dev.pubsubworker.testservices.TestServices}
 * and the JUnit 5 extension {@link dev.pubsubworker.testservices.TestServicesExtension}. A
 * service that cannot be had skips the test with one line naming what to install or set, and fails
 * it under {@code CI=true}. The client libraries these services are used with are optional
 * dependencies of {@code worker-testkit}: declare the ones you use.
 */
package dev.pubsubworker.testservices;
