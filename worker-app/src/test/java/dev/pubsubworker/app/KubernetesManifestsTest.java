package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigResolveOptions;
import dev.pubsubworker.runtime.cli.WorkerCli;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The GKE manifests in {@code docker/k8s} (a kustomize base and one overlay per way of setting the
 * replica count), rendered overlay by overlay as {@code kubectl apply -k} would apply them, keep
 * the invariants exactly-once depends on: the pod's kill comes after the worker's graceful stop,
 * probes and scraping hit the port and paths the worker's config serves, every replica of every
 * overlay reads one lock store config, the store's credentials come only from a Secret, the pods
 * run as non-root on a read-only root file system, and the autoscaler and the disruption budget act
 * on the Deployment's pods.
 */
class KubernetesManifestsTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path K8S = ROOT.resolve("docker/k8s");
  private static final String BACKLOG_METRIC =
      "pubsub.googleapis.com|subscription|num_undelivered_messages";
  private static final Pattern SECRET_ENV =
      Pattern.compile("(?i).*(PASSWORD|SECRET|TOKEN|CREDENTIAL|AUTH|REDIS_URI|JDBC_URL).*");

  /** A password in a URI's user info ({@code scheme://user:pw@host}) or a URL parameter. */
  private static final Pattern URI_PASSWORD =
      Pattern.compile("(?i)://[^/@\\s\"]+:[^/@\\s\"]+@|[?;&]password=");

  @TempDir Path dir;

  static Stream<String> overlays() throws IOException {
    try (Stream<Path> dirs = Files.list(K8S.resolve("overlays"))) {
      return dirs.map(p -> p.getFileName().toString()).sorted().toList().stream();
    }
  }

  /** One overlay as {@code kustomize build} renders it. */
  record Rendered(String overlay, List<ObjectNode> objects) {

    static Rendered of(String overlay) throws IOException {
      return new Rendered(overlay, Kustomize.build(K8S.resolve("overlays").resolve(overlay)));
    }

    List<ObjectNode> all(String kind) {
      return objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    }

    ObjectNode one(String kind) {
      List<ObjectNode> found = all(kind);
      assertThat(found).as(overlay + ": objects of kind " + kind).hasSize(1);
      return found.get(0);
    }

    ObjectNode named(String kind, String name) {
      return all(kind).stream()
          .filter(o -> o.path("metadata").path("name").asText().equals(name))
          .findFirst()
          .orElseThrow(() -> new AssertionError(overlay + ": no " + kind + " named " + name));
    }

    ObjectNode deployment() {
      return one("Deployment");
    }

    JsonNode podSpec() {
      return deployment().path("spec").path("template").path("spec");
    }

    JsonNode worker() {
      JsonNode containers = podSpec().path("containers");
      assertThat(containers).as(overlay + ": containers").hasSize(1);
      return containers.get(0);
    }

    Map<String, String> podLabels() {
      return strings(deployment().path("spec").path("template").path("metadata").path("labels"));
    }

    /** The worker config file's text: {@code --config PATH} in a volume from a ConfigMap. */
    String workerConf() {
      List<String> args = texts(worker().path("args"));
      int at = args.indexOf("--config");
      assertThat(at).as(overlay + ": the worker's args name its config").isNotNegative();
      Path file = Path.of(args.get(at + 1));
      JsonNode mount =
          stream(worker().path("volumeMounts"))
              .filter(m -> file.getParent().equals(Path.of(m.path("mountPath").asText())))
              .findFirst()
              .orElseThrow(() -> new AssertionError(overlay + ": nothing mounted at " + file));
      JsonNode volume =
          stream(podSpec().path("volumes"))
              .filter(v -> v.path("name").asText().equals(mount.path("name").asText()))
              .findFirst()
              .orElseThrow();
      String configMap = volume.path("configMap").path("name").asText();
      JsonNode text =
          named("ConfigMap", configMap).path("data").path(file.getFileName().toString());
      assertThat(text.isTextual())
          .as(overlay + ": " + file + " in ConfigMap " + configMap)
          .isTrue();
      return text.asText();
    }

    /** The worker's config: the ConfigMap's file over reference.conf, environment left out. */
    Config config() {
      return ConfigFactory.parseString(workerConf())
          .withFallback(reference())
          .resolve(ConfigResolveOptions.noSystem());
    }

    /** The container port a probe or a scrape endpoint names, by name or number. */
    int port(JsonNode port) {
      if (port.isInt()) {
        return port.asInt();
      }
      return stream(worker().path("ports"))
          .filter(p -> p.path("name").asText().equals(port.asText()))
          .map(p -> p.path("containerPort").asInt())
          .findFirst()
          .orElseThrow(() -> new AssertionError(overlay + ": no container port " + port));
    }
  }

  static Config reference() {
    return ConfigFactory.parseResources(WorkerCli.class.getClassLoader(), "reference.conf")
        .resolve(ConfigResolveOptions.noSystem());
  }

  @Test
  void every_manifest_is_part_of_an_overlay_and_the_overlays_are_the_documented_ones()
      throws IOException {
    assertThat(overlays()).containsExactly("fixed", "hpa", "keda");
    Set<Path> used =
        overlays()
            .flatMap(
                o -> {
                  try {
                    return Kustomize.files(K8S.resolve("overlays").resolve(o)).stream();
                  } catch (IOException e) {
                    throw new IllegalStateException(e);
                  }
                })
            .collect(Collectors.toSet());
    try (Stream<Path> files = Files.walk(K8S)) {
      assertThat(files.filter(p -> p.toString().endsWith(".yaml")).map(Path::normalize))
          .as("manifests no overlay applies")
          .allMatch(used::contains);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overlays")
  void the_pod_is_killed_only_after_the_workers_graceful_stop(String overlay) throws IOException {
    Rendered r = Rendered.of(overlay);
    long grace = r.config().getDuration("pubsub-worker.shutdown-grace").toSeconds();
    assertThat(r.podSpec().path("terminationGracePeriodSeconds").asLong())
        .as(
            "terminationGracePeriodSeconds: above shutdown-grace (%ds) + the stop bound + margin",
            grace)
        .isGreaterThanOrEqualTo(grace + Worker.STOP_BOUND.toSeconds() + 10);
    // A rolling update starts the new pod before an old one stops: capacity never dips.
    assertThat(
            r.deployment()
                .path("spec")
                .path("strategy")
                .path("rollingUpdate")
                .path("maxUnavailable")
                .asInt())
        .isZero();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overlays")
  void probes_and_scraping_hit_the_port_and_paths_the_worker_serves(String overlay)
      throws IOException {
    Rendered r = Rendered.of(overlay);
    int httpPort = r.config().getInt("pubsub-worker.observability.http-port");
    assertThat(httpPort).as("the health server must be on").isPositive();
    JsonNode worker = r.worker();
    Map<String, String> expected =
        Map.of(
            "livenessProbe", "/healthz", "readinessProbe", "/readyz", "startupProbe", "/healthz");
    expected.forEach(
        (probe, path) -> {
          JsonNode get = worker.path(probe).path("httpGet");
          assertThat(get.path("path").asText()).as(overlay + " " + probe).isEqualTo(path);
          assertThat(r.port(get.path("port")))
              .as(overlay + " " + probe + " port")
              .isEqualTo(httpPort);
        });

    ObjectNode monitoring = r.one("PodMonitoring");
    assertThat(monitoring.path("apiVersion").asText()).isEqualTo("monitoring.googleapis.com/v1");
    assertThat(r.podLabels())
        .as("the PodMonitoring selects the worker's pods")
        .containsAllEntriesOf(
            strings(monitoring.path("spec").path("selector").path("matchLabels")));
    JsonNode endpoints = monitoring.path("spec").path("endpoints");
    assertThat(endpoints).isNotEmpty();
    for (JsonNode endpoint : endpoints) {
      assertThat(endpoint.path("path").asText()).isEqualTo("/metrics");
      assertThat(r.port(endpoint.path("port"))).isEqualTo(httpPort);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overlays")
  void the_pods_run_as_the_images_non_root_user_on_a_read_only_root_file_system(String overlay)
      throws IOException {
    Rendered r = Rendered.of(overlay);
    JsonNode pod = r.podSpec().path("securityContext");
    JsonNode container = r.worker().path("securityContext");
    assertThat(pod.path("runAsNonRoot").asBoolean() || container.path("runAsNonRoot").asBoolean())
        .as(overlay + ": runAsNonRoot")
        .isTrue();
    Matcher user =
        Pattern.compile("(?m)^USER (\\d+):(\\d+)$")
            .matcher(Files.readString(ROOT.resolve("docker/Dockerfile")));
    assertThat(user.find()).as("the Dockerfile's numeric USER").isTrue();
    assertThat(pod.path("runAsUser").asInt())
        .isEqualTo(Integer.parseInt(user.group(1)))
        .isPositive();
    assertThat(container.path("readOnlyRootFilesystem").asBoolean()).isTrue();
    assertThat(container.path("allowPrivilegeEscalation").isBoolean()).isTrue();
    assertThat(container.path("allowPrivilegeEscalation").asBoolean()).isFalse();
    assertThat(texts(container.path("capabilities").path("drop"))).contains("ALL");
    // Workload Identity: the pod's service account impersonates a Google service account.
    ObjectNode account = r.named("ServiceAccount", r.podSpec().path("serviceAccountName").asText());
    assertThat(
            account
                .path("metadata")
                .path("annotations")
                .path("iam.gke.io/gcp-service-account")
                .asText())
        .endsWith(".iam.gserviceaccount.com");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overlays")
  void the_lock_stores_credentials_come_only_from_a_secret(String overlay) throws IOException {
    Rendered r = Rendered.of(overlay);
    assertThat(r.all("Secret"))
        .as(overlay + ": Secrets belong in the cluster, not in git")
        .isEmpty();
    for (JsonNode env : r.worker().path("env")) {
      String name = env.path("name").asText();
      if (env.has("value")) {
        assertThat(env.path("value").asText())
            .as(overlay + " env " + name)
            .doesNotContainPattern(URI_PASSWORD);
      }
      if (SECRET_ENV.matcher(name).matches()) {
        assertThat(env.has("value")).as(overlay + ": env " + name + " as plain text").isFalse();
        assertThat(env.path("valueFrom").path("secretKeyRef").path("name").asText())
            .as(overlay + ": env " + name + " from a Secret")
            .isNotEmpty();
      }
    }
    String conf = r.workerConf();
    assertThat(settings(conf))
        .as(overlay + ": the ConfigMap's worker.conf")
        .doesNotContainPattern(URI_PASSWORD)
        .doesNotContainPattern("(?i)\"password\":\"[^\"]+\"");
    // What the config takes from the environment (the store's address and secret) is set.
    Set<String> set =
        stream(r.worker().path("env"))
            .map(e -> e.path("name").asText())
            .collect(Collectors.toSet());
    Matcher variable = Pattern.compile("\\$\\{\\?(\\w+)}").matcher(conf);
    while (variable.find()) {
      if (variable.group(1).startsWith("PUBSUB_WORKER_")) {
        assertThat(set)
            .as(overlay + ": the Deployment sets " + variable.group(1))
            .contains(variable.group(1));
      }
    }
  }

  @Test
  void the_secret_checks_catch_a_password_in_a_config_but_not_in_its_comments() {
    String commented =
        "pubsub-worker.lock-store.redis {\n  # rediss://default:AUTH@10.0.0.3:6378\n"
            + "  uri = ${?PUBSUB_WORKER_REDIS_URI}\n}\n";
    assertThat(settings(commented)).doesNotContainPattern(URI_PASSWORD);
    assertThat(settings("pubsub-worker.lock-store.redis.uri = \"rediss://default:pw@h:6378\""))
        .containsPattern(URI_PASSWORD);
    assertThat(settings("a.jdbc-url = \"jdbc:postgresql://h/db?user=u&password=pw\""))
        .containsPattern(URI_PASSWORD);
    assertThat(settings("pubsub-worker.lock-store.sql.password = \"pw\""))
        .containsPattern("(?i)\"password\":\"[^\"]+\"");
  }

  @Test
  void every_replica_of_every_overlay_shares_one_lock_store() throws IOException {
    Map<String, String> stores = new TreeMap<>();
    for (String overlay : overlays().toList()) {
      Rendered r = Rendered.of(overlay);
      Config store = r.config().getConfig("pubsub-worker.lock-store");
      String type = store.getString("type");
      assertThat(type)
          .as(overlay + ": a process-local store de-duplicates nothing across pods")
          .isNotEqualTo("in-memory");
      if (type.equals("sql")) {
        assertThat(store.getString("sql.jdbc-url")).doesNotStartWith("jdbc:h2:mem:");
      }
      Map<String, String> storeEnv = new TreeMap<>();
      for (JsonNode env : r.worker().path("env")) {
        if (env.path("name").asText().startsWith("PUBSUB_WORKER_")) {
          storeEnv.put(
              env.path("name").asText(),
              env.has("value") ? env.path("value").asText() : env.path("valueFrom").toString());
        }
      }
      stores.put(overlay, store.root().render(ConfigRenderOptions.concise()) + " " + storeEnv);
    }
    assertThat(Set.copyOf(stores.values()))
        .as("lock store config per overlay: " + stores)
        .hasSize(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("overlays")
  void one_owner_sets_the_replica_count_and_it_scales_the_deployment_on_the_backlog(String overlay)
      throws IOException {
    Rendered r = Rendered.of(overlay);
    ObjectNode deployment = r.deployment();
    String name = deployment.path("metadata").path("name").asText();
    List<ObjectNode> keda = r.all("ScaledObject");
    List<ObjectNode> hpa = r.all("HorizontalPodAutoscaler");
    boolean fixed = deployment.path("spec").has("replicas");
    assertThat(keda.size() + hpa.size() + (fixed ? 1 : 0))
        .as(overlay + ": exactly one of a ScaledObject, an HPA and a fixed replica count")
        .isEqualTo(1);
    List<String> subscriptions =
        r.config().getConfig("pubsub-worker.subscriptions").root().keySet().stream()
            .map(id -> r.config().getString("pubsub-worker.subscriptions." + id + ".name"))
            .toList();
    int minReplicas;
    if (!keda.isEmpty()) {
      JsonNode spec = keda.get(0).path("spec");
      assertThat(spec.path("scaleTargetRef").path("name").asText()).isEqualTo(name);
      assertThat(spec.path("scaleTargetRef").path("kind").asText("Deployment"))
          .isEqualTo("Deployment");
      JsonNode trigger = spec.path("triggers").get(0);
      assertThat(trigger.path("type").asText()).isEqualTo("gcp-pubsub");
      JsonNode metadata = trigger.path("metadata");
      assertThat(metadata.path("mode").asText()).isEqualTo("SubscriptionSize");
      assertThat(Double.parseDouble(metadata.path("value").asText())).isPositive();
      assertThat(subscriptions)
          .contains(
              metadata.path("subscriptionName").asText().replaceFirst(".*/subscriptions/", ""));
      ObjectNode auth =
          r.named("TriggerAuthentication", trigger.path("authenticationRef").path("name").asText());
      assertThat(auth.path("spec").path("podIdentity").path("provider").asText()).isEqualTo("gcp");
      minReplicas = spec.path("minReplicaCount").asInt();
    } else if (!hpa.isEmpty()) {
      JsonNode spec = hpa.get(0).path("spec");
      assertThat(spec.path("scaleTargetRef").path("kind").asText()).isEqualTo("Deployment");
      assertThat(spec.path("scaleTargetRef").path("name").asText()).isEqualTo(name);
      JsonNode external = spec.path("metrics").get(0).path("external");
      assertThat(external.path("metric").path("name").asText()).isEqualTo(BACKLOG_METRIC);
      assertThat(subscriptions)
          .contains(
              external
                  .path("metric")
                  .path("selector")
                  .path("matchLabels")
                  .path("resource.labels.subscription_id")
                  .asText());
      assertThat(Double.parseDouble(external.path("target").path("averageValue").asText()))
          .isPositive();
      minReplicas = spec.path("minReplicas").asInt();
    } else {
      minReplicas = deployment.path("spec").path("replicas").asInt();
    }

    // The disruption budget covers the Deployment's pods and still lets a drain proceed.
    ObjectNode pdb = r.one("PodDisruptionBudget");
    assertThat(r.podLabels())
        .as(overlay + ": the PDB selects the Deployment's pods")
        .containsAllEntriesOf(strings(pdb.path("spec").path("selector").path("matchLabels")));
    assertThat(strings(pdb.path("spec").path("selector").path("matchLabels"))).isNotEmpty();
    JsonNode pdbSpec = pdb.path("spec");
    if (pdbSpec.has("maxUnavailable")) {
      assertThat(pdbSpec.path("maxUnavailable").asInt()).isPositive();
    } else {
      assertThat(pdbSpec.path("minAvailable").asInt()).isLessThan(minReplicas);
    }
    assertThat(minReplicas)
        .as(overlay + ": at least two pods, so a drain never stops the work")
        .isGreaterThanOrEqualTo(2);
  }

  @Test
  void the_configmaps_worker_conf_passes_check_config() throws Exception {
    Path config = dir.resolve("worker.conf");
    Files.writeString(config, Rendered.of("keda").workerConf());
    Path log = dir.resolve("check-config.log");
    ProcessBuilder pb =
        AppProcess.builderWithoutExamplePlugin(log, "check-config", "--config", config.toString())
            .directory(ROOT.toFile());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("PUBSUB_WORKER_") || k.endsWith("_EMULATOR_HOST"));
    env.put("GOOGLE_CLOUD_PROJECT", "sample-project");
    env.put("PUBSUB_WORKER_PLUGINS_DIR", ROOT.resolve("plugins/orders-example/target").toString());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(log);
    assertThat(p.exitValue()).as(output).isZero();
    assertThat(output).contains("config OK").contains("orders: orders-sub -> handler orders");
  }

  /**
   * A worker config's settings without its comments (which may show a URI's shape), as concise
   * JSON; {@code ${?VAR}} substitutions are left out.
   */
  static String settings(String conf) {
    return ConfigFactory.parseString(conf)
        .resolve(ConfigResolveOptions.noSystem().setAllowUnresolved(true))
        .root()
        .render(ConfigRenderOptions.concise());
  }

  static Stream<JsonNode> stream(JsonNode array) {
    Stream.Builder<JsonNode> b = Stream.builder();
    array.forEach(b);
    return b.build();
  }

  static List<String> texts(JsonNode array) {
    return stream(array).map(JsonNode::asText).toList();
  }

  static Map<String, String> strings(JsonNode object) {
    Map<String, String> map = new HashMap<>();
    object.properties().forEach(e -> map.put(e.getKey(), e.getValue().asText()));
    return map;
  }
}
