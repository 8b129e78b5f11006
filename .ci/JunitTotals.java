import java.io.IOException;
import java.io.PrintStream;
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
 * CI's verdict: adds up the JUnit XML reports of every test tier and holds each tier to the
 * minimums checked in beside it, so that a green CI means every part ran, not only that nothing
 * which ran failed.
 *
 * <p>Usage: {@code java .ci/JunitTotals.java --minimums FILE TIER=DIR [TIER=DIR...]}. Every
 * {@code *.xml} below DIR is the tier's. A TIER ending in {@code :*} is one tier per report file:
 * {@code sanity:*=target/test-reports/sanity} makes {@code sanity/mount/xfs.xml} the tier {@code
 * sanity:mount:xfs}. Such a DIR may hold {@code started.txt}, the report paths (relative to DIR)
 * of the passes that started; each must exist.
 *
 * <p>CI fails when a tier failed a test, wrote a report in which no test ran, or started a pass
 * that wrote no report; when a tier the minimums file lists has no report, fewer passed tests or
 * more skipped ones than it says; and when a tier reported that the file does not list. Prints one
 * row per tier, the reasons, and {@code N passed, M failed, K skipped} last. Exits 0 when green, 1
 * when not, 2 when the command line or the minimums file is wrong.
 *
 * <p>Ginkgo (csi-sanity, Kubernetes' suite) lists every spec of the binary, also those its focus
 * and skip rules left out; it marks them {@code <skipped message="skipped"/>}, while a spec that
 * skipped itself carries its reason after the word. Left-out specs are counted as "not selected",
 * apart from skips. Ginkgo's suite-level nodes ({@code [BeforeSuite]} and kin) count only when they
 * fail.
 */
public final class JunitTotals {

  public static void main(String[] args) {
    System.exit(run(args, System.out));
  }

  /** The whole check, printing to {@code out}; returns the exit status. */
  static int run(String[] args, PrintStream out) {
    Path minimumsFile = null;
    List<String> tierArgs = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--minimums") && i + 1 < args.length) {
        minimumsFile = Path.of(args[++i]);
      } else {
        tierArgs.add(args[i]);
      }
    }
    if (minimumsFile == null || tierArgs.isEmpty()) {
      out.println("usage: java .ci/JunitTotals.java --minimums FILE TIER=DIR [TIER=DIR...]");
      return 2;
    }
    try {
      Minimums minimums = Minimums.read(minimumsFile);
      Map<String, Tally> tiers = Tiers.read(tierArgs);
      minimums.listed().forEach(tier -> tiers.computeIfAbsent(tier, key -> new Tally()));
      List<String> problems = new ArrayList<>();
      for (var tier : tiers.entrySet()) {
        problems.addAll(Verdict.of(tier.getKey(), tier.getValue(), minimums));
      }
      Table.print(tiers, minimums, out);
      problems.forEach(out::println);
      Table.printTotals(tiers, out);
      return problems.isEmpty() ? 0 : 1;
    } catch (IllegalArgumentException | IOException e) {
      out.println("error: " + e.getMessage());
      return 2;
    }
  }

  private JunitTotals() {}
}

/** Why one tier keeps CI red: each reason a line that names the tier and what to do. */
final class Verdict {
  static List<String> of(String tier, Tally t, Minimums minimums) {
    List<String> problems = new ArrayList<>();
    t.unwritten.forEach(report -> problems.add(
        "NO REPORT " + tier + ": the pass started but wrote no report (" + report + ")"));
    if (t.failed > 0) {
      problems.add("FAILED " + tier + ": " + t.failed + " failed");
    }
    if (t.reports > 0 && t.ranNothing()) {
      problems.add("NO TEST RAN " + tier + ": its reports hold no test that passed or failed");
    }
    Minimums.Row row = minimums.row(tier);
    if (row == null) {
      if (t.reports > 0) {
        problems.add("NOT LISTED " + tier + ": " + t.passed + " passed, " + t.skipped
            + " skipped; a new tier joins CI with its line in " + minimums.file()
            + " (tier, passed at least, skipped at most)");
      }
      return problems;
    }
    if (t.reports == 0 && t.unwritten.isEmpty()) {
      problems.add("MISSING " + tier + ": no report, while " + minimums.file() + " wants at least "
          + row.passed() + " passed; a tier removed on purpose leaves that file in the same"
          + " change");
    } else if (t.reports > 0 && t.passed < row.passed()) {
      problems.add("FEWER PASSED " + tier + ": " + t.passed + " passed, " + minimums.file()
          + " wants at least " + row.passed() + "; tests removed on purpose lower it there");
    }
    if (t.skipped > row.skipped()) {
      problems.add("MORE SKIPPED " + tier + ": " + t.skipped + " skipped themselves, "
          + minimums.file() + " allows " + row.skipped()
          + "; a skip added on purpose raises it there");
    }
    return problems;
  }

  private Verdict() {}
}

/** What one tier ran. */
final class Tally {
  int reports;
  int passed;
  int failed;
  int skipped;
  int notSelected;
  final List<String> failures = new ArrayList<>();
  /** Reports that a started pass should have written and did not. */
  final List<String> unwritten = new ArrayList<>();

  boolean ranNothing() {
    return passed + failed == 0;
  }

  void add(Tally other) {
    reports += other.reports;
    passed += other.passed;
    failed += other.failed;
    skipped += other.skipped;
    notSelected += other.notSelected;
  }
}

/** The tiers of the command line, each read from its reports. */
final class Tiers {
  static final String PER_REPORT = ":*";
  static final String STARTED = "started.txt";

  static Map<String, Tally> read(List<String> args) throws IOException {
    Map<String, Tally> tiers = new LinkedHashMap<>();
    for (String arg : args) {
      int equals = arg.indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException("not TIER=DIR: " + arg);
      }
      String tier = arg.substring(0, equals);
      Path dir = Path.of(arg.substring(equals + 1));
      if (tier.endsWith(PER_REPORT)) {
        readPerReport(tier.substring(0, tier.length() - PER_REPORT.length()), dir, tiers);
      } else if (tiers.containsKey(tier)) {
        throw new IllegalArgumentException("tier " + tier + " named twice: one directory each");
      } else {
        Tally tally = new Tally();
        for (Path report : JunitReport.below(dir)) {
          JunitReport.count(report, tally);
        }
        tiers.put(tier, tally);
      }
    }
    return tiers;
  }

  /** One tier per report file below {@code dir}, and one per started pass without a report. */
  private static void readPerReport(String prefix, Path dir, Map<String, Tally> tiers)
      throws IOException {
    for (Path report : JunitReport.below(dir)) {
      Tally tally = new Tally();
      JunitReport.count(report, tally);
      tiers.put(tierOf(prefix, dir.relativize(report)), tally);
    }
    Path started = dir.resolve(STARTED);
    if (Files.isRegularFile(started)) {
      for (String line : Files.readAllLines(started)) {
        Path report = dir.resolve(line.strip());
        if (!line.isBlank() && !Files.isRegularFile(report)) {
          String tier = tierOf(prefix, Path.of(line.strip()));
          tiers.computeIfAbsent(tier, key -> new Tally()).unwritten.add(report.toString());
        }
      }
    }
  }

  /** {@code mount/xfs.xml} below {@code sanity:*} is {@code sanity:mount:xfs}. */
  static String tierOf(String prefix, Path relative) {
    String name = relative.toString().replaceFirst("\\.xml$", "");
    return prefix + ":" + name.replace('/', ':');
  }

  private Tiers() {}
}

/** Reads JUnit XML: Surefire's and Failsafe's, ginkgo's, and the scripts' own. */
final class JunitReport {
  private static final String GINKGO_NOT_SELECTED = "skipped";
  private static final String GINKGO_SUITE_NODE =
      "\\[(Synchronized)?(Before|After)Suite\\].*|\\[Report(Before|After)Suite\\].*"
          + "|\\[DeferCleanup.*";

  static List<Path> below(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(file -> file.toString().endsWith(".xml")).sorted().toList();
    }
  }

  /** Adds the report's test cases to {@code tally}; a report that is not XML is a failure. */
  static void count(Path report, Tally tally) {
    NodeList cases;
    try {
      var factory = DocumentBuilderFactory.newInstance();
      // Reports are data: no document type, so no external entity is ever fetched.
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      var builder = factory.newDocumentBuilder();
      builder.setErrorHandler(null); // the exception says what is wrong; no second copy on stderr
      cases = builder.parse(report.toFile()).getElementsByTagName("testcase");
    } catch (SAXException | IOException | javax.xml.parsers.ParserConfigurationException e) {
      tally.reports++;
      tally.failed++;
      tally.failures.add(report + " is not well-formed XML: " + e.getMessage());
      return;
    }
    if (cases.getLength() > 0) {
      tally.reports++;
    }
    for (int i = 0; i < cases.getLength(); i++) {
      Element testCase = (Element) cases.item(i);
      if (has(testCase, "failure") || has(testCase, "error")) {
        tally.failed++;
        tally.failures.add(name(testCase) + " (" + report.getFileName() + ")");
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

  private static String name(Element testCase) {
    return testCase.getAttribute("classname").isEmpty()
        ? testCase.getAttribute("name")
        : testCase.getAttribute("classname") + "." + testCase.getAttribute("name");
  }

  private static boolean has(Element testCase, String child) {
    return testCase.getElementsByTagName(child).getLength() > 0;
  }

  private JunitReport() {}
}

/**
 * The minimums file: per tier, the fewest tests that must pass and the most that may skip
 * themselves. One tier a line, {@code TIER PASSED SKIPPED}; {@code #} starts a comment.
 */
final class Minimums {
  record Row(int passed, int skipped) {}

  private final Path file;
  private final Map<String, Row> rows;

  private Minimums(Path file, Map<String, Row> rows) {
    this.file = file;
    this.rows = rows;
  }

  static Minimums read(Path file) throws IOException {
    Map<String, Row> rows = new LinkedHashMap<>();
    List<String> lines = Files.readAllLines(file);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).replaceFirst("#.*", "").strip();
      if (line.isEmpty()) {
        continue;
      }
      String where = file + ":" + (i + 1) + ": ";
      String[] fields = line.split("\\s+");
      if (fields.length != 3) {
        throw new IllegalArgumentException(where + "not TIER PASSED SKIPPED: " + line);
      }
      Row row = new Row(count(fields[1], where), count(fields[2], where));
      if (row.passed() < 1) {
        throw new IllegalArgumentException(where + fields[0] + " must pass at least one test");
      }
      if (rows.put(fields[0], row) != null) {
        throw new IllegalArgumentException(where + fields[0] + " is listed twice");
      }
    }
    return new Minimums(file, rows);
  }

  private static int count(String field, String where) {
    try {
      int count = Integer.parseInt(field);
      if (count >= 0) {
        return count;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(where + "not a count: " + field);
  }

  Path file() {
    return file;
  }

  Iterable<String> listed() {
    return rows.keySet();
  }

  /** The tier's row, or null when the file does not list it. */
  Row row(String tier) {
    return rows.get(tier);
  }
}

/** The per-tier rows, the failed tests, and the closing line. */
final class Table {
  private static final int FAILURES_LISTED = 25;
  private static final String FORMAT = "%-40s %7s %13s %6s %13s %12s%n";

  static void print(Map<String, Tally> tiers, Minimums minimums, PrintStream out) {
    out.printf(
        FORMAT, "tier", "reports", "passed (min)", "failed", "skipped (max)", "not selected");
    for (var tier : tiers.entrySet()) {
      Tally t = tier.getValue();
      Minimums.Row row = minimums.row(tier.getKey());
      if (row == null && t.reports == 0 && t.unwritten.isEmpty()) {
        continue; // a directory no tier wrote, and none is expected (a module without *IT)
      }
      out.printf(FORMAT, tier.getKey(), t.reports,
          t.passed + (row == null ? " (-)" : " (" + row.passed() + ")"), t.failed,
          t.skipped + (row == null ? " (-)" : " (" + row.skipped() + ")"), t.notSelected);
    }
    List<String> failures = new ArrayList<>();
    tiers.forEach((tier, t) -> t.failures.forEach(f -> failures.add(tier + ": " + f)));
    failures.stream().limit(FAILURES_LISTED).forEach(f -> out.println("FAILED " + f));
    if (failures.size() > FAILURES_LISTED) {
      out.printf("... and %d more failures%n", failures.size() - FAILURES_LISTED);
    }
  }

  /** The closing line, which CI's harness reads: it must stay last and keep its form. */
  static void printTotals(Map<String, Tally> tiers, PrintStream out) {
    Tally total = new Tally();
    tiers.values().forEach(total::add);
    out.printf("%d passed, %d failed, %d skipped%n", total.passed, total.failed, total.skipped);
  }

  private Table() {}
}
