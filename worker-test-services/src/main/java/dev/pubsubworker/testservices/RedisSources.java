package dev.pubsubworker.testservices;

import static dev.pubsubworker.testservices.AttemptResult.found;
import static dev.pubsubworker.testservices.AttemptResult.misconfigured;
import static dev.pubsubworker.testservices.AttemptResult.notConfigured;
import static dev.pubsubworker.testservices.AttemptResult.notHere;

import dev.pubsubworker.emulators.ManagedProcess;
import dev.pubsubworker.testservices.ServiceResolver.Step;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.List;

/**
 * Where Redis can come from: {@code REDIS_URL}; the local server on 127.0.0.1:6379; a {@code
 * redis:7-alpine} container; the {@code redis-server} binary of {@code
 * com.github.codemonstur:embedded-redis}.
 */
final class RedisSources {

  private static final Duration PING_TIMEOUT = Duration.ofSeconds(2);

  private RedisSources() {}

  static List<Step<RedisService>> steps(ServiceEnvironment env) {
    return List.of(
        new Step<>(ServiceSource.ENV_VAR, () -> fromVariable(env)),
        new Step<>(ServiceSource.LOCAL, () -> local(env)),
        new Step<>(ServiceSource.TESTCONTAINERS, () -> container(env)),
        new Step<>(ServiceSource.EMBEDDED, () -> embedded(env)));
  }

  private static AttemptResult<RedisService> fromVariable(ServiceEnvironment env) {
    String variable = ServiceKind.REDIS.environmentVariable();
    String value = env.variable(variable).orElse(null);
    if (value == null) {
      return notConfigured();
    }
    URI uri;
    try {
      uri = new URI(value);
      Probes.redisPing(uri, PING_TIMEOUT);
    } catch (URISyntaxException | IllegalArgumentException e) {
      return misconfigured(
          variable + " is not a redis:// or rediss:// URI (" + ServiceResolver.describe(e) + ")");
    } catch (IOException e) {
      return misconfigured(
          variable
              + "="
              + RedisService.redact(URI.create(value))
              + " does not answer PING ("
              + ServiceResolver.describe(e)
              + "): start Redis there or unset "
              + variable);
    }
    return found(
        new RedisService(uri, ServiceSource.ENV_VAR), variable + "=" + RedisService.redact(uri));
  }

  private static AttemptResult<RedisService> local(ServiceEnvironment env) {
    ServiceEnvironment.LocalPorts ports = env.localPorts();
    URI uri = URI.create("redis://" + new HostPort(ports.host(), ports.redis()));
    try {
      Probes.redisPing(uri, PING_TIMEOUT);
    } catch (IOException e) {
      return notHere(
          "no answer to PING on "
              + uri.getHost()
              + ":"
              + uri.getPort()
              + " ("
              + ServiceResolver.describe(e)
              + ")");
    }
    return found(new RedisService(uri, ServiceSource.LOCAL), uri.toString());
  }

  private static AttemptResult<RedisService> container(ServiceEnvironment env) throws IOException {
    if (!env.dockerAnswers()) {
      return notHere("no Docker engine answers");
    }
    HostPort address = env.containers().redis();
    URI uri = URI.create("redis://" + address);
    Probes.redisPing(uri, PING_TIMEOUT);
    return found(
        new RedisService(uri, ServiceSource.TESTCONTAINERS),
        ContainerServices.REDIS_IMAGE + " at " + uri);
  }

  private static AttemptResult<RedisService> embedded(ServiceEnvironment env) throws IOException {
    ManagedProcess process = EmbeddedServers.redis(env.workDir());
    URI uri = URI.create("redis://127.0.0.1:" + process.port());
    return found(
        new RedisService(uri, ServiceSource.EMBEDDED),
        "redis-server from embedded-redis at "
            + uri
            + ", up in "
            + Seconds.format(process.startupTime())
            + ", log "
            + process.logFile());
  }
}
