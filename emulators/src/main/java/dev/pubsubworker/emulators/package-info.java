/**
 * Google's Pub/Sub, Datastore and Firestore emulators started from the Google Cloud CLI, for the
 * demo and for tests: {@link dev.pubsubworker.emulators.CloudSdk} says where the Cloud CLI may be,
 * {@link dev.pubsubworker.emulators.CloudEmulator} finds an emulator's launcher there and starts
 * it, as a {@link dev.pubsubworker.emulators.ManagedProcess} (free loopback port, log file,
 * readiness probe, stop of the whole process tree), which starts any other server process the same
 * way. JDK only.
 */
package dev.pubsubworker.emulators;
