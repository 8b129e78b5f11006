package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.driver.config.PoolConfig;
import io.fabric8.generator.annotation.ValidationRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every copy of the table of backends ({@link PoolConfig.Backend}) outside driver-cli agrees with
 * it: the operator's checks, the CRD's enums, CEL rules and descriptions, and the docs' table. The
 * CEL rules are checked on the API server by {@code BackendFactsIT} with the same cases.
 */
class BackendFactsTest {
  private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  static List<BackendFactCases.Case> cases() {
    return BackendFactCases.all();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theOperatorsChecksAnswerAsTheTable(BackendFactCases.Case c) {
    List<String> problems = SpecValidator.problems(c.spec());
    if (c.allowed()) {
      assertThat(problems).isEmpty();
    } else {
      assertThat(problems).singleElement().asString().contains("fsType");
    }
  }

  @Test
  void theCrdsEnumsNameTheTablesBackendsAndFilesystems() {
    assertThat(Arrays.stream(PoolBackend.values()).map(Enum::name))
        .containsExactlyElementsOf(
            Arrays.stream(PoolConfig.Backend.values()).map(PoolConfig.Backend::crdName).toList());
    assertThat(Arrays.stream(FsType.values()).map(Enum::name))
        .containsExactlyElementsOf(PoolConfig.Backend.allFsTypes());
    assertThat(new PoolSpec().getBackend().name())
        .as("the CRD's default backend is the flag's")
        .isEqualTo(PoolConfig.Backend.IMAGE_FILE.crdName());
  }

  /**
   * The CEL rules on filesystems name only the table's backends and filesystems, and each default
   * filesystem. Hand-written for the two rows of today: a row whose filesystems or default the
   * rules do not name fails here until its rules are written.
   */
  @Test
  void theCelRulesOnFilesystemsNameTheTablesFacts() {
    Set<String> literals = new LinkedHashSet<>();
    StringBuilder rules = new StringBuilder();
    for (ValidationRule rule :
        StorageClusterSpec.class.getAnnotationsByType(ValidationRule.class)) {
      if (rule.value().contains("fsType") || rule.value().contains("backend")) {
        rules.append(rule.value()).append('\n');
        Matcher quoted = Pattern.compile("'([^']*)'").matcher(rule.value());
        while (quoted.find()) {
          literals.add(quoted.group(1));
        }
      }
    }
    Set<String> known = new LinkedHashSet<>(PoolConfig.Backend.allFsTypes());
    for (PoolConfig.Backend row : PoolConfig.Backend.values()) {
      known.add(row.crdName());
      assertThat(rules)
          .as("the default of " + row.crdName())
          .contains("'" + row.defaultFsType() + "'");
      assertThat(literals)
          .as("the rules name " + row.crdName() + " or it is the default")
          .contains(row.crdName());
    }
    assertThat(known).containsAll(literals);
  }

  @Test
  void theCrdsDescriptionsSayWhatEachBackendServes() throws NoSuchFieldException {
    String poolFsTypes = description(PoolSpec.class, "fsTypes");
    String classFsType = description(StorageClassSpec.class, "fsType");
    for (PoolConfig.Backend row : PoolConfig.Backend.values()) {
      assertThat(poolFsTypes)
          .contains(String.join(" and ", row.fsTypes()) + " for " + row.crdName());
      assertThat(classFsType).containsPattern(row.defaultFsType() + " on an? " + row.crdName());
    }
  }

  /** docs/backends.md: a column per backend, by its flag name, and what each serves. */
  @Test
  void theDocsTableOfBackendsAgrees() throws IOException {
    List<String> lines = Files.readAllLines(REPO.resolve("docs/backends.md"));
    String header = lines.stream().filter(l -> l.startsWith("| |")).findFirst().orElseThrow();
    String filesystems =
        lines.stream().filter(l -> l.startsWith("| filesystems |")).findFirst().orElseThrow();
    List<String> columns = cells(header);
    List<String> served = cells(filesystems);
    PoolConfig.Backend[] rows = PoolConfig.Backend.values();
    assertThat(columns).hasSize(rows.length);
    for (int i = 0; i < rows.length; i++) {
      assertThat(columns.get(i)).contains("`" + rows[i].flagName() + "`");
      for (String fs : rows[i].fsTypes()) {
        assertThat(served.get(i)).contains(fs);
      }
      assertThat(served.get(i).contains("no block volumes"))
          .as(rows[i].flagName() + " serves block volumes: " + rows[i].blockVolumes())
          .isNotEqualTo(rows[i].blockVolumes());
      assertThat(String.join("\n", lines)).contains("`" + rows[i].crdName() + "`");
    }
  }

  /** The cells of a Markdown table row after its first. */
  private static List<String> cells(String row) {
    List<String> cells = Arrays.stream(row.split("\\|")).map(String::strip).toList();
    return cells.subList(2, cells.size());
  }

  private static String description(Class<?> type, String field) throws NoSuchFieldException {
    return type.getDeclaredField(field).getAnnotation(JsonPropertyDescription.class).value();
  }
}
