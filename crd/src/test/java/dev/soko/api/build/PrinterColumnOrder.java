package dev.soko.api.build;

import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts a generated CRD's printer columns in the order its model class (StorageCluster, StorageNode)
 * declares them, so that {@code kubectl get} shows Ready first and Age last. fabric8's generator
 * sorts them by JSON path (fabric8io/kubernetes-client#7454), which put Age first. The build runs
 * this on both generated copies (see crd/pom.xml) before any test or package reads them; it edits
 * the YAML as text, so everything else in the file stays byte for byte as generated.
 *
 * <pre>PrinterColumnOrder CRD_FILE...</pre>
 */
public final class PrinterColumnOrder {
  private static final Pattern BLOCK = Pattern.compile("^(\\s*)-? ?additionalPrinterColumns:$");
  private static final Pattern KIND = Pattern.compile("(?m)^    kind: \"([A-Za-z0-9]+)\"$");
  private static final Pattern NAME = Pattern.compile("^\\s*-?\\s*name: \"([^\"]+)\"$");

  private PrinterColumnOrder() {}

  public static void main(String[] args) throws IOException, ClassNotFoundException {
    for (String arg : args) {
      Path file = Path.of(arg);
      String yaml = Files.readString(file, StandardCharsets.UTF_8);
      String ordered = reorder(yaml, declaredOrder(modelOf(yaml)));
      if (!ordered.equals(yaml)) {
        Files.writeString(file, ordered, StandardCharsets.UTF_8);
      }
    }
  }

  /** The column names in the order of StorageCluster's {@code @AdditionalPrinterColumn}s. */
  static List<String> declaredOrder() {
    return declaredOrder(StorageCluster.class);
  }

  /** The model class of a generated CRD: its kind in the API's package. */
  static Class<?> modelOf(String yaml) throws ClassNotFoundException {
    Matcher kind = KIND.matcher(yaml);
    if (!kind.find()) {
      throw new IllegalArgumentException("no spec.names.kind in the CRD");
    }
    return Class.forName(StorageCluster.class.getPackageName() + "." + kind.group(1));
  }

  /** The column names in the order of the class's {@code @AdditionalPrinterColumn}s. */
  static List<String> declaredOrder(Class<?> model) {
    return Arrays.stream(model.getAnnotationsByType(AdditionalPrinterColumn.class))
        .map(AdditionalPrinterColumn::name)
        .toList();
  }

  /**
   * Reorders the items of every {@code additionalPrinterColumns} list in {@code yaml} by {@code
   * order}. Fails when the list's names are not exactly those of {@code order}: a column the model
   * does not declare means the file is not the one this class was written for.
   */
  static String reorder(String yaml, List<String> order) {
    List<String> lines = new ArrayList<>(Arrays.asList(yaml.split("\n", -1)));
    for (int i = 0; i < lines.size(); i++) {
      if (BLOCK.matcher(lines.get(i)).matches()) {
        reorderItems(lines, i + 1, order);
      }
    }
    return String.join("\n", lines);
  }

  /** Sorts the list items that start at {@code first}; an item is its "- " line and the deeper. */
  private static void reorderItems(List<String> lines, int first, List<String> order) {
    String itemPrefix = indentation(lines.get(first)) + "- ";
    if (!lines.get(first).startsWith(itemPrefix)) {
      throw new IllegalArgumentException(
          "no list after additionalPrinterColumns: " + lines.get(first));
    }
    String continuation = " ".repeat(itemPrefix.length());
    List<List<String>> items = new ArrayList<>();
    int end = first;
    while (end < lines.size()) {
      String line = lines.get(end);
      if (line.startsWith(itemPrefix)) {
        items.add(new ArrayList<>(List.of(line)));
      } else if (line.startsWith(continuation)) {
        items.get(items.size() - 1).add(line);
      } else {
        break;
      }
      end++;
    }
    List<String> names = items.stream().map(PrinterColumnOrder::name).toList();
    if (names.size() != order.size() || !names.containsAll(order)) {
      throw new IllegalArgumentException(
          "printer columns " + names + " are not the declared columns " + order);
    }
    items.sort(Comparator.comparingInt(item -> order.indexOf(name(item))));
    List<String> sorted = items.stream().flatMap(List::stream).toList();
    for (int i = 0; i < sorted.size(); i++) {
      lines.set(first + i, sorted.get(i));
    }
  }

  private static String name(List<String> item) {
    for (String line : item) {
      Matcher m = NAME.matcher(line);
      if (m.matches()) {
        return m.group(1);
      }
    }
    throw new IllegalArgumentException("printer column without a name: " + item);
  }

  private static String indentation(String line) {
    return line.substring(0, line.length() - line.stripLeading().length());
  }
}
