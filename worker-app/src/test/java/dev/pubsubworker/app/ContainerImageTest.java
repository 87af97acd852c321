package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The two ways to build the worker's image agree, checked without a Docker engine or a base-image
 * pull: the Jib configuration (worker-app's {@code jib} profile) and {@code docker/Dockerfile} run
 * the executable jar's main class with the same JVM flags, default arguments, environment, numeric
 * non-root user and health port, and both ship {@code config/}. Jib is never part of the default
 * build, and its image, like the executable jar, carries the example plugin's classes (for {@code
 * demo}) without the ServiceLoader entry that would make {@code run} load it.
 */
class ContainerImageTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final XPath XPATH = XPathFactory.newInstance().newXPath();

  private static Document appPom;
  private static Document parentPom;
  private static Element jib;
  private static Dockerfile dockerfile;

  /** The instructions of a Dockerfile that the image's runtime behaviour depends on. */
  record Dockerfile(
      String user,
      List<String> entrypoint,
      List<String> cmd,
      List<Integer> exposed,
      Map<String, String> env,
      List<String> lines) {

    static Dockerfile parse(Path file) throws Exception {
      // Continuation lines joined, comments dropped.
      String text = Files.readString(file).replaceAll("\\\\\\n\\s*", " ");
      List<String> lines =
          text.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
      ObjectMapper json = new ObjectMapper();
      String user = null;
      List<String> entrypoint = List.of();
      List<String> cmd = List.of();
      List<Integer> exposed = new ArrayList<>();
      Map<String, String> env = new LinkedHashMap<>();
      for (String line : lines) {
        String[] parts = line.split("\\s+", 2);
        String rest = parts.length > 1 ? parts[1] : "";
        switch (parts[0]) {
          case "USER" -> user = rest;
          case "ENTRYPOINT" -> entrypoint = List.of(json.readValue(rest, String[].class));
          case "CMD" -> cmd = List.of(json.readValue(rest, String[].class));
          case "EXPOSE" -> {
            for (String port : rest.split("\\s+")) {
              exposed.add(Integer.parseInt(port.replace("/tcp", "")));
            }
          }
          case "ENV" -> {
            Matcher m = Pattern.compile("(\\w+)=(\"[^\"]*\"|\\S+)").matcher(rest);
            while (m.find()) {
              env.put(m.group(1), m.group(2).replaceAll("^\"|\"$", ""));
            }
          }
          default -> {}
        }
      }
      return new Dockerfile(user, entrypoint, cmd, exposed, env, lines);
    }
  }

  @BeforeAll
  static void read() throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    appPom = factory.newDocumentBuilder().parse(ROOT.resolve("worker-app/pom.xml").toFile());
    parentPom = factory.newDocumentBuilder().parse(ROOT.resolve("pom.xml").toFile());
    jib =
        (Element)
            XPATH.evaluate(
                "/project/profiles/profile[id='jib']/build/plugins/plugin"
                    + "[artifactId='jib-maven-plugin']",
                appPom,
                XPathConstants.NODE);
    assertThat(jib).as("worker-app's jib profile configures jib-maven-plugin").isNotNull();
    dockerfile = Dockerfile.parse(ROOT.resolve("docker/Dockerfile"));
  }

  private static String text(Node context, String path) throws Exception {
    return ((String) XPATH.evaluate(path, context, XPathConstants.STRING)).strip();
  }

  private static List<String> texts(Node context, String path) throws Exception {
    NodeList nodes = (NodeList) XPATH.evaluate(path, context, XPathConstants.NODESET);
    List<String> values = new ArrayList<>();
    for (int i = 0; i < nodes.getLength(); i++) {
      values.add(nodes.item(i).getTextContent().strip());
    }
    return values;
  }

  @Test
  void both_images_run_as_the_same_numeric_non_root_user() throws Exception {
    assertThat(dockerfile.user()).matches("\\d+:\\d+");
    assertThat(Integer.parseInt(dockerfile.user().split(":")[0])).isPositive();
    assertThat(text(jib, "configuration/container/user")).isEqualTo(dockerfile.user());
  }

  @Test
  void both_images_run_the_executable_jars_main_class_with_the_same_flags_and_arguments()
      throws Exception {
    // The Dockerfile runs the executable jar, whose Main-Class is the shade plugin's.
    assertThat(dockerfile.entrypoint()).containsExactly("java", "-jar", "/app/pubsub-worker.jar");
    String mainClass =
        text(appPom, "/project/build/plugins/plugin[artifactId='maven-shade-plugin']//mainClass");
    assertThat(mainClass).isEqualTo(WorkerApp.class.getName());
    assertThat(text(jib, "configuration/container/mainClass")).isEqualTo(mainClass);
    assertThat(texts(jib, "configuration/container/jvmFlags/jvmFlag"))
        .containsExactly(dockerfile.env().get("JAVA_TOOL_OPTIONS").split(" "))
        .contains("-XX:+ExitOnOutOfMemoryError")
        .anyMatch(flag -> flag.startsWith("-XX:MaxRAMPercentage="));
    assertThat(texts(jib, "configuration/container/args/arg"))
        .isEqualTo(dockerfile.cmd())
        .startsWith("run", "--config");
    Map<String, String> jibEnv = new LinkedHashMap<>();
    NodeList env =
        (NodeList)
            XPATH.evaluate("configuration/container/environment/*", jib, XPathConstants.NODESET);
    for (int i = 0; i < env.getLength(); i++) {
      jibEnv.put(env.item(i).getNodeName(), env.item(i).getTextContent().strip());
    }
    Map<String, String> dockerEnv = new LinkedHashMap<>(dockerfile.env());
    dockerEnv.remove("JAVA_TOOL_OPTIONS");
    assertThat(jibEnv).isEqualTo(dockerEnv);
  }

  @Test
  void both_images_ship_config_and_expose_the_health_port() throws Exception {
    int httpPort =
        KubernetesManifestsTest.reference().getInt("pubsub-worker.observability.http-port");
    assertThat(dockerfile.exposed()).containsExactly(httpPort);
    assertThat(texts(jib, "configuration/container/ports/port"))
        .containsExactly(String.valueOf(httpPort));
    // The default --config is one of config/, which both images copy to /app/config.
    String defaultConfig = dockerfile.cmd().get(dockerfile.cmd().indexOf("--config") + 1);
    assertThat(defaultConfig).startsWith("/app/config/");
    assertThat(ROOT.resolve("config").resolve(defaultConfig.substring("/app/config/".length())))
        .exists();
    assertThat(dockerfile.lines()).contains("COPY config/ /app/config/");
    assertThat(text(jib, "configuration/extraDirectories/paths/path[into='/app/config']/from"))
        .isEqualTo("${project.basedir}/../config");
    assertThat(text(jib, "configuration/container/labels/org.opencontainers.image.title"))
        .isEqualTo("pubsub-worker");
  }

  @Test
  void the_image_has_the_example_plugins_classes_but_run_cannot_load_it_from_the_class_path()
      throws Exception {
    Element unpack =
        (Element)
            XPATH.evaluate(
                "/project/profiles/profile[id='jib']/build/plugins/plugin"
                    + "[artifactId='maven-dependency-plugin']/executions/execution"
                    + "[goals/goal='unpack-dependencies']",
                appPom,
                XPathConstants.NODE);
    assertThat(unpack).isNotNull();
    assertThat(text(unpack, "configuration/includeArtifactIds"))
        .isEqualTo("pubsub-worker-plugin-orders-example");
    assertThat(text(unpack, "configuration/excludes")).isEqualTo("META-INF/services/**");
    String unpacked = text(unpack, "configuration/outputDirectory");
    String into =
        text(jib, "configuration/extraDirectories/paths/path[from='" + unpacked + "']/into");
    assertThat(texts(jib, "configuration/container/extraClasspath/path")).containsExactly(into);
    assertThat(
            texts(
                jib,
                "configuration/pluginExtensions/pluginExtension/configuration/filters/filter/glob"))
        .containsExactly("/app/libs/pubsub-worker-plugin-orders-example-*.jar");
  }

  @Test
  void jib_runs_only_when_asked_for() throws Exception {
    // Declared for the whole reactor (so `jib:build` resolves everywhere), skipped by default.
    Element managed =
        (Element)
            XPATH.evaluate(
                "/project/build/pluginManagement/plugins/plugin[artifactId='jib-maven-plugin']",
                parentPom,
                XPathConstants.NODE);
    assertThat(managed).isNotNull();
    assertThat(text(managed, "configuration/skip")).isEqualTo("true");
    assertThat(text(jib, "configuration/skip")).isEqualTo("false");
    // No phase runs it: not in the default build, no execution in the profile.
    assertThat(texts(appPom, "/project/build/plugins/plugin/artifactId"))
        .doesNotContain("jib-maven-plugin");
    assertThat(texts(parentPom, "/project/build/plugins/plugin/artifactId"))
        .doesNotContain("jib-maven-plugin");
    assertThat(texts(jib, "executions/execution")).isEmpty();
  }
}
