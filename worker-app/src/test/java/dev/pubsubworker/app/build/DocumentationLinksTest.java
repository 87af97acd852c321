package dev.pubsubworker.app.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in the repository's Markdown resolves for a reader of the repository: the
 * file it names exists inside the repository, and a {@code #fragment} names a heading of that file
 * (GitHub's anchor rules: lower case, punctuation dropped, spaces as hyphens). External links are
 * not followed (the build is offline).
 */
class DocumentationLinksTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** {@code [text](target)}; the target ends at the first space or closing parenthesis. */
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6}\\s+(.+?)\\s*$");

  private static final Set<String> SKIPPED_DIRECTORIES =
      Set.of("target", ".git", ".mvn", "node_modules", ".idea");

  @Test
  void every_relative_link_in_the_markdown_resolves_inside_the_repository() throws IOException {
    List<Path> documents = markdownFiles();
    assertThat(documents).as("Markdown files under " + ROOT).isNotEmpty();
    assertThat(documents).contains(ROOT.resolve("docs/design.md"));

    List<String> broken = new ArrayList<>();
    for (Path document : documents) {
      String text = withoutCodeBlocks(Files.readString(document));
      Matcher link = LINK.matcher(text);
      while (link.find()) {
        String target = link.group(1);
        if (target.matches("(?i)[a-z][a-z0-9+.-]*:.*")) {
          continue; // https:, mailto: … — not followed offline
        }
        String problem = problem(document, target);
        if (problem != null) {
          broken.add(ROOT.relativize(document) + ": (" + target + ") " + problem);
        }
      }
    }
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void github_anchors_are_computed_as_github_does() {
    assertThat(anchors("## The worker: from outcome to reply\n### `inspect` — one key\n"))
        .containsExactlyInAnyOrder("the-worker-from-outcome-to-reply", "inspect--one-key");
  }

  private static String problem(Path document, String target) {
    int hash = target.indexOf('#');
    String file = hash < 0 ? target : target.substring(0, hash);
    String fragment = hash < 0 ? null : target.substring(hash + 1);
    Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
    if (!resolved.startsWith(ROOT)) {
      return "leaves the repository";
    }
    if (!Files.exists(resolved)) {
      return "names no file";
    }
    if (fragment != null && resolved.toString().endsWith(".md")) {
      try {
        if (!anchors(Files.readString(resolved)).contains(fragment)) {
          return "names no heading of " + ROOT.relativize(resolved);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return null;
  }

  static Set<String> anchors(String markdown) {
    Set<String> anchors = new HashSet<>();
    Matcher heading = HEADING.matcher(withoutCodeBlocks(markdown));
    while (heading.find()) {
      String slug =
          heading
              .group(1)
              .toLowerCase(Locale.ROOT)
              .replaceAll("[^\\p{L}\\p{N} _-]", "")
              .replace(' ', '-');
      String unique = slug;
      for (int n = 1; !anchors.add(unique); n++) {
        unique = slug + "-" + n;
      }
    }
    return anchors;
  }

  /**
   * Fenced code blocks hold shell comments ({@code # …}) and sample text, not headings or links.
   */
  private static String withoutCodeBlocks(String markdown) {
    return markdown.replaceAll("(?ms)^\\s*```.*?^\\s*```[^\\n]*$", "");
  }

  private static List<Path> markdownFiles() throws IOException {
    try (Stream<Path> files = Files.walk(ROOT)) {
      return files
          .filter(p -> p.toString().endsWith(".md"))
          .filter(
              p -> {
                for (Path part : ROOT.relativize(p)) {
                  if (SKIPPED_DIRECTORIES.contains(part.toString())) {
                    return false;
                  }
                }
                return true;
              })
          .sorted()
          .toList();
    }
  }
}
