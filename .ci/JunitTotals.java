import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Adds up the JUnit XML reports of every test tier, so that CI's verdict and its closing line come
 * from what the tiers recorded rather than from their console output.
 *
 * <p>Usage: {@code java .ci/JunitTotals.java TIER=DIR [TIER=DIR...]}; a tier may be named more than
 * once (one directory per module). Every {@code *.xml} below a directory is read. Prints one row per
 * tier and {@code N passed, M failed, K skipped} last; exits 1 when a tier has a failure, no report
 * or no test that ran.
 *
 * <p>Ginkgo (csi-sanity, Kubernetes' suite) lists every spec of the binary, also those its focus
 * and skip rules left out; it marks them {@code <skipped message="skipped"/>}, while a spec that
 * skipped itself carries its reason after the word. Left-out specs are counted as "not selected",
 * apart from skips. Ginkgo's suite-level nodes ({@code [BeforeSuite]} and kin) count only when they
 * fail.
 */
public final class JunitTotals {

  private static final String GINKGO_NOT_SELECTED = "skipped";
  private static final String GINKGO_SUITE_NODE =
      "\\[(Synchronized)?(Before|After)Suite\\].*|\\[Report(Before|After)Suite\\].*|\\[DeferCleanup.*";
  private static final int FAILURES_LISTED = 25;

  /** What one tier ran. */
  static final class Tally {
    int reports;
    int passed;
    int failed;
    int skipped;
    int notSelected;
    final List<String> failures = new ArrayList<>();

    boolean ranNothing() {
      return passed + failed == 0;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: java .ci/JunitTotals.java TIER=DIR [TIER=DIR...]");
      System.exit(2);
    }
    Map<String, Tally> tiers = new LinkedHashMap<>();
    for (String arg : args) {
      int equals = arg.indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException("not TIER=DIR: " + arg);
      }
      Tally tally = tiers.computeIfAbsent(arg.substring(0, equals), tier -> new Tally());
      Path dir = Path.of(arg.substring(equals + 1));
      for (Path report : reports(dir)) {
        try {
          count(report, tally);
        } catch (SAXException e) {
          tally.failed++;
          tally.failures.add(report + " is not well-formed XML: " + e.getMessage());
        }
      }
    }
    System.exit(print(tiers) ? 0 : 1);
  }

  private static List<Path> reports(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(file -> file.toString().endsWith(".xml")).sorted().toList();
    }
  }

  private static void count(Path report, Tally tally) throws Exception {
    var factory = DocumentBuilderFactory.newInstance();
    // Reports are data: no document type, so no external entity is ever fetched.
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    var builder = factory.newDocumentBuilder();
    builder.setErrorHandler(null); // the exception says what is wrong; no second copy on stderr
    NodeList cases = builder.parse(report.toFile()).getElementsByTagName("testcase");
    if (cases.getLength() > 0) {
      tally.reports++;
    }
    for (int i = 0; i < cases.getLength(); i++) {
      Element testCase = (Element) cases.item(i);
      String name = testCase.getAttribute("classname").isEmpty()
          ? testCase.getAttribute("name")
          : testCase.getAttribute("classname") + "." + testCase.getAttribute("name");
      if (has(testCase, "failure") || has(testCase, "error")) {
        tally.failed++;
        tally.failures.add(name + " (" + report.getFileName() + ")");
      } else if (testCase.getAttribute("name").matches(GINKGO_SUITE_NODE)) {
        continue;
      } else if (has(testCase, "skipped")) {
        Element skipped = (Element) testCase.getElementsByTagName("skipped").item(0);
        if (GINKGO_NOT_SELECTED.equals(skipped.getAttribute("message"))) {
          tally.notSelected++;
        } else {
          tally.skipped++;
        }
      } else {
        tally.passed++;
      }
    }
  }

  private static boolean has(Element testCase, String child) {
    return testCase.getElementsByTagName(child).getLength() > 0;
  }

  /** Prints the table and the failures; true when every tier ran tests and none failed. */
  private static boolean print(Map<String, Tally> tiers) {
    boolean green = true;
    Tally total = new Tally();
    System.out.printf("%-20s %8s %8s %8s %8s %13s%n", "tier", "reports", "passed", "failed", "skipped",
        "not selected");
    for (var tier : tiers.entrySet()) {
      Tally t = tier.getValue();
      String verdict = t.reports == 0 ? "  NO REPORT" : t.ranNothing() ? "  NO TEST RAN" : "";
      System.out.printf("%-20s %8d %8d %8d %8d %13d%s%n", tier.getKey(), t.reports, t.passed, t.failed,
          t.skipped, t.notSelected, verdict);
      green &= verdict.isEmpty() && t.failed == 0;
      total.passed += t.passed;
      total.failed += t.failed;
      total.skipped += t.skipped;
      total.failures.addAll(t.failures.stream().map(f -> tier.getKey() + ": " + f).toList());
    }
    total.failures.stream().limit(FAILURES_LISTED).forEach(f -> System.out.println("FAILED " + f));
    if (total.failures.size() > FAILURES_LISTED) {
      System.out.printf("... and %d more failures%n", total.failures.size() - FAILURES_LISTED);
    }
    System.out.printf("%d passed, %d failed, %d skipped%n", total.passed, total.failed, total.skipped);
    return green;
  }

  private JunitTotals() {}
}
