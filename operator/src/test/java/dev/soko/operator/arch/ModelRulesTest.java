package dev.soko.operator.arch;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The operator's structure as tests (Strimzi keeps the same rule as a checkstyle import-control).
 * Plain Jupiter tests calling {@code check}, so surefire selects and runs them like any other test.
 */
class ModelRulesTest {
  private static final JavaClasses OPERATOR =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("dev.soko.operator", "dev.soko.api", "dev.soko.driver.config");

  /**
   * The model builds Kubernetes objects from the API and nothing else, so it stays pure and
   * testable without a cluster: no reconciler, client or runtime class may leak into it. Narrow
   * exceptions: the driver's configuration (driver-cli, the JDK only), whose table of backends the
   * checks read; and, for reading the versions table resource, Jackson's annotations and fabric8's
   * {@code Serialization} (its YAML reader), never the client itself.
   */
  @Test
  void theModelImportsOnlyTheApiFabric8sModelAndTheJdk() {
    classes()
        .that()
        .resideInAPackage("dev.soko.operator.model..")
        .should()
        .onlyDependOnClassesThat(
            resideInAnyPackage(
                    "dev.soko.operator.model..",
                    "dev.soko.api..",
                    "dev.soko.driver.config..",
                    "io.fabric8.kubernetes.api.model..",
                    "io.fabric8.kubernetes.api.builder..",
                    "java..",
                    "com.fasterxml.jackson.annotation..")
                .or(name("io.fabric8.kubernetes.client.utils.Serialization")))
        .check(OPERATOR);
  }

  @Test
  void theOperatorsPackagesHaveNoCycles() {
    slices().matching("dev.soko.operator.(*)..").should().beFreeOfCycles().check(OPERATOR);
  }
}
