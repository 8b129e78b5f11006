package dev.soko.operator.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README stays a front door: it opens with the two set-up commands, and its repository table
 * names every top-level folder, so that a newcomer finds where each part lives.
 */
class ReadmeFrontDoorTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** What a build or an editor leaves at the top (see .gitignore), and git's own. */
  private static final Set<String> NOT_OF_THE_PROJECT =
      Set.of(".git", "target", ".idea", ".vscode", ".cache");

  @Test
  void itOpensWithMakeDemoAndMakeTest() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    assertThat(readme).as("the title, then the commands").startsWith("# Soko\n\n```sh\n");
    int start = readme.indexOf("```sh\n") + "```sh\n".length();
    String firstBlock = readme.substring(start, readme.indexOf("\n```", start));
    List<String> commands =
        firstBlock.lines().filter(line -> !line.startsWith(" ")).map(this::command).toList();
    assertThat(commands).containsExactly("make demo", "make test");
  }

  @Test
  void itsRepositoryTableNamesEveryTopLevelFolder() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String table = readme.substring(readme.indexOf("## Repository"));
    List<String> folders;
    try (Stream<Path> entries = Files.list(ROOT)) {
      folders =
          entries
              .filter(Files::isDirectory)
              .map(p -> p.getFileName().toString())
              .filter(name -> !NOT_OF_THE_PROJECT.contains(name))
              .sorted()
              .toList();
    }
    assertThat(folders).contains("crd", "driver-cli", "test", ".ci");
    for (String folder : folders) {
      assertThat(table).as("the README's repository table").contains("`" + folder + "/`");
    }
  }

  private String command(String line) {
    int comment = line.indexOf('#');
    return (comment < 0 ? line : line.substring(0, comment)).strip();
  }
}
