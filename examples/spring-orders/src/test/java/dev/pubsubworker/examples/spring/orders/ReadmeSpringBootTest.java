package dev.pubsubworker.examples.spring.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's "Spring Boot" blocks are this application's source: its {@code application.yaml}
 * settings and the two ways in of {@link OrdersApplication}, so that they compile and run (the
 * end-to-end test runs them) as shown.
 */
class ReadmeSpringBootTest {

  private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
  private static final Path APP = ROOT.resolve("examples/spring-orders/src/main");

  @Test
  void the_readme_blocks_are_the_applications_source() throws Exception {
    String readme = Files.readString(ROOT.resolve("README.md"));
    Matcher section = Pattern.compile("(?s)\\n## Spring Boot\\n(.*?)\\n## ").matcher(readme);
    assertThat(section.find()).as("README's \"Spring Boot\" section").isTrue();
    List<String> yaml = blocks(section.group(1), "yaml");
    List<String> java = blocks(section.group(1), "java");
    assertThat(yaml).hasSize(1);
    assertThat(java).hasSize(2);

    String settings = Files.readString(APP.resolve("resources/application.yaml"));
    String source =
        Files.readString(
            APP.resolve("java/dev/pubsubworker/examples/spring/orders/OrdersApplication.java"));
    assertThat(lines(yaml.get(0))).isEqualTo(lines(region(settings, "# ", "yaml")));
    assertThat(lines(java.get(0))).isEqualTo(lines(region(source, "// ", "orders")));
    assertThat(lines(java.get(1))).isEqualTo(lines(region(source, "// ", "refunds")));
  }

  /** The fenced blocks of {@code language} in {@code text}, in order (indented ones too). */
  private static List<String> blocks(String text, String language) {
    Matcher m = Pattern.compile("(?sm)^( *)```" + language + "\\n(.*?)^\\1```$").matcher(text);
    return m.results().map(r -> r.group(2)).toList();
  }

  private static String region(String text, String comment, String name) {
    Matcher m =
        Pattern.compile(
                "(?s)"
                    + Pattern.quote(comment + "readme:" + name + ":start")
                    + "\\n(.*?)\\n\\s*"
                    + Pattern.quote(comment + "readme:" + name + ":end"))
            .matcher(text);
    assertThat(m.find()).as("region readme:" + name).isTrue();
    return m.group(1);
  }

  /** The lines without their common indentation and trailing blanks. */
  private static List<String> lines(String text) {
    List<String> lines = text.stripTrailing().lines().toList();
    int indent =
        lines.stream()
            .filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length())
            .min()
            .orElse(0);
    return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent).stripTrailing()).toList();
  }
}
