package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README's engine block is {@link ReadmeExample}'s, so it compiles as shown. */
class ReadmeExampleTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void the_readme_block_is_the_compiled_example() throws Exception {
    String readme = Files.readString(ROOT.resolve("README.md"));
    Matcher block =
        Pattern.compile("(?s)## Exactly-once for your own Subscriber\\n.*?```java\\n(.*?)```")
            .matcher(readme);
    assertThat(block.find()).as("README's \"Exactly-once for your own Subscriber\" block").isTrue();

    String source =
        Files.readString(
            ROOT.resolve("worker-pubsub/src/test/java/dev/pubsubworker/pubsub/ReadmeExample.java"));
    Matcher region =
        Pattern.compile("(?s)// README begin\\n(.*?)\\n\\s*// README end").matcher(source);
    assertThat(region.find()).isTrue();
    assertThat(lines(block.group(1))).isEqualTo(lines(region.group(1)));
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
