package dev.soko.operator.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CI's verdict ({@code .ci/JunitTotals.java}, which {@code .ci/run} runs after {@code make test})
 * on synthetic report trees: green only when every tier the minimums file lists reported enough
 * passed tests and few enough self-skips, every started suite pass wrote its report, and no tier
 * reported unlisted. The program is compiled from the checked-in file, as {@code java
 * .ci/JunitTotals.java} compiles it.
 */
class CiVerdictTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final String MINIMUMS =
      """
      unit:driver                   3   0
      integration:driver            2   0
      sanity:mount:xfs              2   1
      conformance:image-file:ci     2   0
      conformance:btrfs:ci          1   2
      """;

  @TempDir static Path classes;
  private static Method run;

  @TempDir Path tree;
  private String output;

  @BeforeAll
  static void compile() throws Exception {
    int status =
        ToolProvider.getSystemJavaCompiler()
            .run(
                null,
                null,
                null,
                "-d",
                classes.toString(),
                ROOT.resolve(".ci/JunitTotals.java").toString());
    assertThat(status).as("javac .ci/JunitTotals.java").isZero();
    var loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, null);
    run =
        loader.loadClass("JunitTotals").getDeclaredMethod("run", String[].class, PrintStream.class);
    run.setAccessible(true);
  }

  /** A tree that meets every minimum above. */
  @BeforeEach
  void greenTree() throws IOException {
    Files.writeString(tree.resolve("minimums"), MINIMUMS);
    report("driver/target/surefire-reports/TEST-A.xml", 3, 0, 0, 0);
    report("driver/target/failsafe-reports/TEST-AIT.xml", 2, 0, 0, 0);
    report("sanity/mount/xfs.xml", 2, 1, 5, 0);
    report("conformance/image-file/ci.xml", 2, 0, 7000, 0);
    report("conformance/btrfs/ci.xml", 1, 2, 7000, 0);
    Files.writeString(tree.resolve("sanity/started.txt"), "mount/xfs.xml\n");
    Files.writeString(tree.resolve("conformance/started.txt"), "image-file/ci.xml\nbtrfs/ci.xml\n");
  }

  @Test
  void aTreeThatMeetsEveryMinimumIsGreenAndEndsWithTheTotals() throws Exception {
    assertThat(verdict()).isZero();
    assertThat(output)
        .contains("conformance:btrfs:ci", "sanity:mount:xfs")
        .endsWith("10 passed, 0 failed, 3 skipped\n");
  }

  @Test
  void aModuleWhoseIntegrationTestsVanishedFailsNamingItsTierAndTheFile() throws Exception {
    delete("driver/target/failsafe-reports");
    assertThat(verdict()).isOne();
    assertThat(output)
        .contains("MISSING integration:driver: no report, while " + tree.resolve("minimums"));
  }

  @Test
  void aDefinitionThatNeverRanFails() throws Exception {
    delete("conformance/btrfs");
    Files.writeString(tree.resolve("conformance/started.txt"), "image-file/ci.xml\n");
    assertThat(verdict()).isOne();
    assertThat(output).contains("MISSING conformance:btrfs:ci");
  }

  @Test
  void aPassWhoseSpecsAllSkippedThemselvesFails() throws Exception {
    report("conformance/btrfs/ci.xml", 0, 3, 7000, 0);
    assertThat(verdict()).isOne();
    assertThat(output)
        .contains(
            "NO TEST RAN conformance:btrfs:ci",
            "FEWER PASSED conformance:btrfs:ci: 0 passed",
            "MORE SKIPPED conformance:btrfs:ci: 3 skipped themselves");
  }

  @Test
  void aPassThatStartedAndWroteNoReportFails() throws Exception {
    delete("sanity/mount/xfs.xml");
    assertThat(verdict()).isOne();
    assertThat(output)
        .contains(
            "NO REPORT sanity:mount:xfs: the pass started but wrote no report ("
                + tree.resolve("sanity/mount/xfs.xml"));
  }

  @Test
  void aStartedPassThatNoMinimumListsAndWroteNoReportFailsToo() throws Exception {
    Files.writeString(tree.resolve("sanity/started.txt"), "mount/xfs.xml\nblock/xfs.xml\n");
    assertThat(verdict()).isOne();
    assertThat(output).contains("NO REPORT sanity:block:xfs");
  }

  @Test
  void aTierThatReportedButIsNotListedFails() throws Exception {
    report("operator/target/surefire-reports/TEST-B.xml", 4, 0, 0, 0);
    assertThat(verdict()).isOne();
    assertThat(output).contains("NOT LISTED unit:operator: 4 passed, 0 skipped");
  }

  @Test
  void fewerPassedTestsThanTheMinimumFail() throws Exception {
    report("driver/target/surefire-reports/TEST-A.xml", 2, 0, 0, 0);
    assertThat(verdict()).isOne();
    assertThat(output).contains("FEWER PASSED unit:driver: 2 passed", "at least 3");
  }

  @Test
  void aFailedTestFailsAndIsNamed() throws Exception {
    report("driver/target/surefire-reports/TEST-A.xml", 3, 0, 0, 1);
    assertThat(verdict()).isOne();
    assertThat(output)
        .contains("FAILED unit:driver: S.failed0 (TEST-A.xml)", "FAILED unit:driver: 1 failed")
        .endsWith("10 passed, 1 failed, 3 skipped\n");
  }

  @Test
  void aMinimumsFileThatCannotBeReadIsAnErrorOfItsOwn() throws Exception {
    Files.writeString(tree.resolve("minimums"), "unit:driver 3\n");
    assertThat(verdict()).isEqualTo(2);
    assertThat(output).contains("minimums:1: not TIER PASSED SKIPPED");
    Files.writeString(tree.resolve("minimums"), "unit:driver 0 0\n");
    assertThat(verdict()).isEqualTo(2);
    assertThat(output).contains("unit:driver must pass at least one test");
  }

  /** The checked-in file can be met: each of its rows, reported with its own figures, is green. */
  @Test
  void theCheckedInMinimumsAreReadAndEachRowCanBeMet() throws Exception {
    List<String> args = new ArrayList<>(List.of("--minimums", ROOT + "/.ci/minimums"));
    for (String[] row : checkedInRows()) {
      String dir = row[0].replace(':', '-');
      report(dir + "/report.xml", Integer.parseInt(row[1]), Integer.parseInt(row[2]), 0, 0);
      args.add(row[0] + "=" + tree.resolve(dir));
    }
    assertThat(run(args)).as(output).isZero();
  }

  /** Every module with tests has its tiers in the checked-in file, so none can vanish unseen. */
  @Test
  void theCheckedInMinimumsListEachModulesUnitAndIntegrationTiers() throws Exception {
    List<String> listed = checkedInRows().stream().map(row -> row[0]).toList();
    try (Stream<Path> poms = Files.list(ROOT)) {
      for (Path module : poms.filter(dir -> Files.isRegularFile(dir.resolve("pom.xml"))).toList()) {
        String name = module.getFileName().toString();
        if (has(module, "Test.java")) {
          assertThat(listed).contains("unit:" + name);
        }
        if (has(module, "IT.java")) {
          assertThat(listed).contains("integration:" + name);
        }
      }
    }
  }

  private int verdict() throws Exception {
    return run(
        List.of(
            "--minimums",
            tree.resolve("minimums").toString(),
            "unit:driver=" + tree.resolve("driver/target/surefire-reports"),
            "integration:driver=" + tree.resolve("driver/target/failsafe-reports"),
            "unit:operator=" + tree.resolve("operator/target/surefire-reports"),
            "integration:operator=" + tree.resolve("operator/target/failsafe-reports"),
            "sanity:*=" + tree.resolve("sanity"),
            "conformance:*=" + tree.resolve("conformance")));
  }

  private int run(List<String> args) throws Exception {
    var buffer = new ByteArrayOutputStream();
    try (var out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
      int status = (int) run.invoke(null, (Object) args.toArray(String[]::new), out);
      output = buffer.toString(StandardCharsets.UTF_8);
      return status;
    }
  }

  /**
   * Writes a JUnit report as Surefire and ginkgo write them: passed cases, cases that skipped
   * themselves (with a reason), ginkgo's left-out specs ({@code message="skipped"}), a passed
   * suite-level node (never counted) and failed cases.
   */
  private void report(String path, int passed, int skipped, int notSelected, int failed)
      throws IOException {
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<testsuite name=\"S\">\n");
    xml.append("  <testcase name=\"[BeforeSuite]\"/>\n");
    for (int i = 0; i < passed; i++) {
      xml.append("  <testcase classname=\"S\" name=\"passed").append(i).append("\"/>\n");
    }
    for (int i = 0; i < skipped; i++) {
      xml.append("  <testcase classname=\"S\" name=\"skipped")
          .append(i)
          .append("\">")
          .append("<skipped message=\"skipped - the driver does not support it\"/></testcase>\n");
    }
    for (int i = 0; i < notSelected; i++) {
      xml.append("  <testcase classname=\"S\" name=\"left-out")
          .append(i)
          .append("\">")
          .append("<skipped message=\"skipped\"/></testcase>\n");
    }
    for (int i = 0; i < failed; i++) {
      xml.append("  <testcase classname=\"S\" name=\"failed")
          .append(i)
          .append("\">")
          .append("<failure message=\"boom\">trace</failure></testcase>\n");
    }
    Path file = tree.resolve(path);
    Files.createDirectories(file.getParent());
    Files.writeString(file, xml.append("</testsuite>\n"));
  }

  private void delete(String path) throws IOException {
    try (Stream<Path> files = Files.walk(tree.resolve(path))) {
      for (Path file : files.sorted((a, b) -> b.compareTo(a)).toList()) {
        Files.delete(file);
      }
    }
  }

  private static List<String[]> checkedInRows() throws IOException {
    return Files.readAllLines(ROOT.resolve(".ci/minimums")).stream()
        .map(line -> line.replaceFirst("#.*", "").strip())
        .filter(line -> !line.isEmpty())
        .map(line -> line.split("\\s+"))
        .toList();
  }

  private static boolean has(Path module, String suffix) throws IOException {
    Path tests = module.resolve("src/test/java");
    if (!Files.isDirectory(tests)) {
      return false;
    }
    try (Stream<Path> files = Files.walk(tests)) {
      return files.anyMatch(file -> file.getFileName().toString().endsWith(suffix));
    }
  }
}
