package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.CloudEmulator;

/**
 * What the Testcontainers source starts, one call per service. {@link ContainerServices#DOCKER}
 * starts real containers; resolution tests substitute a starter that records what was asked for, so
 * that which source is chosen when can be checked on a machine without Docker.
 */
interface ContainerStarter {

  /** A Redis container's address. */
  HostPort redis();

  /** A PostgreSQL container (database {@code test}). */
  JdbcEndpoint postgres();

  /** A MariaDB container (database {@code test}). */
  JdbcEndpoint mariadb();

  /** A {@code google-cloud-cli:emulators} container running {@code emulator}, and its address. */
  HostPort emulator(CloudEmulator emulator);
}
