package dev.soko.operator.dist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.operator.dist.MarkdownLinks.Link;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README, docs/ and every other Markdown file of the repository link only to what the
 * repository holds: a moved or renamed file, a heading whose anchor changed, or a reference to a
 * file beside the repository fails the build instead of a reader.
 */
class MarkdownLinksTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void everyRelativeLinkResolvesToAFileOfTheRepositoryAndAnAnchorOfIt() {
    List<Path> files = MarkdownLinks.files(ROOT);
    assertThat(files).contains(ROOT.resolve("README.md"), ROOT.resolve("docs/status.md"));
    assertThat(broken(ROOT, files)).isEmpty();
  }

  @Test
  void noMarkdownFileLinksOutsideTheRepository() {
    assertThat(outside(ROOT, MarkdownLinks.files(ROOT))).isEmpty();
  }

  @Test
  void aLinkThatLeavesTheRepositoryIsFoundInALinkAndACodeSpanButNotInAFence(@TempDir Path dir)
      throws IOException {
    Path repo = Files.createDirectories(dir.resolve("repo"));
    Files.writeString(repo.resolve("a.md"), "# A title\n");
    Path readme =
        Files.writeString(
            repo.resolve("README.md"),
            """
            # Intro
            See [a](a.md#a-title), [gone](docs/gone.md), [no anchor](a.md#other) and
            [the web](https://example.com/x.md).
            The design is in `../elsewhere/NOTES.md`; [beside](../beside.md).

            ```
            [in a fence](../fenced.md)
            ```
            """);
    List<Path> files = List.of(readme);
    assertThat(broken(repo, files))
        .containsExactly(
            "README.md:2: docs/gone.md (no such file)",
            "README.md:2: a.md#other (no heading 'other' in a.md)",
            "README.md:4: ../beside.md (no such file)");
    assertThat(outside(repo, files))
        .containsExactly("README.md:4: ../elsewhere/NOTES.md", "README.md:4: ../beside.md");
  }

  /** Relative links whose file, or whose heading in a Markdown file, does not exist. */
  private static List<String> broken(Path root, List<Path> files) {
    List<String> broken = new ArrayList<>();
    for (Path file : files) {
      for (Link link : MarkdownLinks.links(file)) {
        if (link.codeSpan() || link.external()) {
          continue;
        }
        String target = link.target();
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        if (!Files.exists(resolved)) {
          broken.add(link.where(root) + " (no such file)");
        } else if (hash >= 0 && resolved.toString().endsWith(".md")) {
          String anchor = target.substring(hash + 1);
          if (!MarkdownLinks.anchors(resolved).contains(anchor)) {
            broken.add(
                link.where(root)
                    + " (no heading '"
                    + anchor
                    + "' in "
                    + root.relativize(resolved)
                    + ")");
          }
        }
      }
    }
    return broken;
  }

  /** Links and path-like code spans that leave the repository, or name an absolute file. */
  private static List<String> outside(Path root, List<Path> files) {
    List<String> outside = new ArrayList<>();
    for (Path file : files) {
      for (Link link : MarkdownLinks.links(file)) {
        if (link.external()) {
          continue;
        }
        String target = link.target();
        boolean absolute = target.startsWith("/") || target.startsWith("file:");
        if (absolute || !file.getParent().resolve(target).normalize().startsWith(root)) {
          outside.add(link.where(root));
        }
      }
    }
    return outside;
  }
}
