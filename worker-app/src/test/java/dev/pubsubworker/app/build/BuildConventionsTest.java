package dev.pubsubworker.app.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The build's conventions, read from the repository's files: the BOM lists exactly the published
 * modules at the parent's version and the parent does not import it; {@code .ci/run} runs the
 * README's test command through the Maven wrapper; the wrapper fetches a checksummed Maven from
 * Maven Central that the enforcer's Maven range accepts.
 */
class BuildConventionsTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /**
   * Modules that are built but not published for users: the app, the examples, the benchmarks, the
   * BOM itself and the Spring modules' parent (a parent, never a dependency).
   */
  private static final Set<String> UNPUBLISHED =
      Set.of(
          "pubsub-worker-app",
          "pubsub-worker-plugin-orders-example",
          "pubsub-worker-spring-orders-example",
          "pubsub-worker-bench",
          "pubsub-worker-bom",
          "pubsub-worker-spring-parent");

  @Test
  void the_bom_lists_every_published_module_at_the_parents_version() throws Exception {
    Document parent = pom(ROOT.resolve("pom.xml"));
    Document bom = pom(ROOT.resolve("pubsub-worker-bom/pom.xml"));
    String version = child(parent.getDocumentElement(), "version");

    assertThat(child(bom.getDocumentElement(), "version")).isEqualTo(version);
    assertThat(children(bom.getDocumentElement(), "parent"))
        .as("the BOM inherits no third-party pins from the parent")
        .isEmpty();

    Set<String> published = new TreeSet<>();
    for (Element module : descendants(parent.getDocumentElement(), "module")) {
      Document modulePom = pom(ROOT.resolve(module.getTextContent().trim()).resolve("pom.xml"));
      String artifactId = child(modulePom.getDocumentElement(), "artifactId");
      if (!UNPUBLISHED.contains(artifactId)) {
        published.add(artifactId);
      }
    }
    Set<String> managed = new TreeSet<>();
    for (Element dependency : descendants(bom.getDocumentElement(), "dependency")) {
      assertThat(child(dependency, "groupId")).isEqualTo("dev.pubsubworker");
      assertThat(child(dependency, "version")).isEqualTo("${project.version}");
      managed.add(child(dependency, "artifactId"));
    }
    assertThat(managed).isEqualTo(published);
  }

  /**
   * Every published jar with code names its module for a modular application ({@code
   * Automatic-Module-Name}): a valid Java module name under {@code dev.pubsubworker}, one per jar.
   * Read from the jars the build made, so run from the root's build (each module is packaged before
   * worker-app's tests run).
   */
  @Test
  void every_published_jar_names_its_module() throws Exception {
    Document parent = pom(ROOT.resolve("pom.xml"));
    String version = child(parent.getDocumentElement(), "version");
    Set<String> names = new TreeSet<>();
    int jars = 0;
    for (Element module : descendants(parent.getDocumentElement(), "module")) {
      Path dir = ROOT.resolve(module.getTextContent().trim());
      String artifactId = child(pom(dir.resolve("pom.xml")).getDocumentElement(), "artifactId");
      if (artifactId.equals("pubsub-worker-app")) {
        break; // the modules after it in the reactor (the Spring ones) are not packaged yet
      }
      if (UNPUBLISHED.contains(artifactId) || !Files.isDirectory(dir.resolve("src/main/java"))) {
        continue;
      }
      Path jar = dir.resolve("target/" + artifactId + "-" + version + ".jar");
      assertThat(jar).as("built by the root's build before worker-app's tests").isRegularFile();
      try (java.util.jar.JarFile f = new java.util.jar.JarFile(jar.toFile())) {
        String name = f.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
        assertThat(name).as(artifactId).isNotNull().startsWith("dev.pubsubworker.");
        assertThat(name.split("\\."))
            .as(artifactId + ": each part a Java identifier")
            .allMatch(part -> javax.lang.model.SourceVersion.isIdentifier(part))
            .noneMatch(javax.lang.model.SourceVersion::isKeyword);
        assertThat(names.add(name)).as(artifactId + ": " + name + " is not another jar's").isTrue();
      }
      jars++;
    }
    assertThat(jars).as("published jars with code").isGreaterThanOrEqualTo(10);
  }

  @Test
  void the_parent_does_not_import_the_bom() throws Exception {
    Document parent = pom(ROOT.resolve("pom.xml"));
    for (Element dependency : descendants(parent.getDocumentElement(), "dependency")) {
      assertThat(child(dependency, "artifactId")).isNotEqualTo("pubsub-worker-bom");
    }
  }

  @Test
  void ci_runs_the_readmes_test_command_through_the_wrapper() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    Matcher block =
        Pattern.compile("(?s)## Build and test\\n\\n```bash\\n(.*?)```").matcher(readme);
    assertThat(block.find()).as("README's Build and test block").isTrue();
    String command = block.group(1).replaceFirst("\\s+#.*", "").trim();
    assertThat(command).isEqualTo("./mvnw -B verify");

    List<String> ciCommands = new ArrayList<>();
    for (String line : Files.readAllLines(ROOT.resolve(".ci/run"))) {
      if (line.startsWith("./mvnw") || line.startsWith("mvn")) {
        ciCommands.add(line.trim());
      }
    }
    assertThat(ciCommands).containsExactly(command);
    assertThat(Files.isExecutable(ROOT.resolve("mvnw"))).isTrue();
  }

  @Test
  void the_wrapper_fetches_a_checksummed_maven_from_central_that_the_enforcer_accepts()
      throws Exception {
    Properties wrapper = new Properties();
    try (InputStream in =
        Files.newInputStream(ROOT.resolve(".mvn/wrapper/maven-wrapper.properties"))) {
      wrapper.load(in);
    }
    String url = wrapper.getProperty("distributionUrl");
    Matcher version =
        Pattern.compile(
                "https://repo\\.maven\\.apache\\.org/maven2/org/apache/maven/apache-maven/"
                    + "(\\d+)\\.(\\d+)\\.(\\d+)/apache-maven-\\1\\.\\2\\.\\3-bin\\.zip")
            .matcher(url);
    assertThat(version.matches()).as(url).isTrue();
    assertThat(wrapper.getProperty("distributionSha256Sum")).matches("[0-9a-f]{64}");

    Document parent = pom(ROOT.resolve("pom.xml"));
    Element maven = descendants(parent.getDocumentElement(), "requireMavenVersion").get(0);
    Matcher range = Pattern.compile("\\[(\\d+)\\.(\\d+),\\)").matcher(child(maven, "version"));
    assertThat(range.matches()).as("the enforcer's Maven range is [major.minor,)").isTrue();
    int wrapped = Integer.parseInt(version.group(1)) * 1000 + Integer.parseInt(version.group(2));
    int required = Integer.parseInt(range.group(1)) * 1000 + Integer.parseInt(range.group(2));
    assertThat(wrapped).isGreaterThanOrEqualTo(required);
  }

  static Document pom(Path file) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return factory.newDocumentBuilder().parse(file.toFile());
  }

  /** The text of {@code parent}'s direct child element {@code name}; fails if there is none. */
  static String child(Element parent, String name) {
    List<Element> found = children(parent, name);
    assertThat(found).as("<" + name + "> in <" + parent.getTagName() + ">").hasSize(1);
    return found.get(0).getTextContent().trim();
  }

  static List<Element> children(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node node = nodes.item(i);
      if (node instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }

  static List<Element> descendants(Element root, String name) {
    List<Element> found = new ArrayList<>();
    NodeList nodes = root.getElementsByTagName(name);
    for (int i = 0; i < nodes.getLength(); i++) {
      found.add((Element) nodes.item(i));
    }
    return found;
  }
}
