package dev.soko.operator.arch;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The reconciler's steps as packages ({@code reconcile/package-info.java}): {@code kinds} under
 * everything, {@code observe} reads, {@code apply} writes, {@code status} computes. The rules keep
 * a write out of status collection and out of observation, and keep the registry free of the steps
 * that read it.
 */
class ReconcileRulesTest {
  private static final String RECONCILE = "dev.soko.operator.reconcile";
  private static final String KINDS = RECONCILE + ".kinds..";
  private static final String OBSERVE = RECONCILE + ".observe..";
  private static final String APPLY = RECONCILE + ".apply..";
  private static final String STATUS = RECONCILE + ".status..";

  private static final JavaClasses OPERATOR =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("dev.soko.operator");

  @Test
  void theRegistryAndItsCacheDependOnNoStep() {
    noClasses()
        .that()
        .resideInAPackage(KINDS)
        .should()
        .dependOnClassesThat(
            resideInAPackage(OBSERVE)
                .or(resideInAPackage(APPLY))
                .or(resideInAPackage(STATUS))
                .or(resideInAPackage(RECONCILE)))
        .because("every step reads the registry; the registry reads none of them")
        .check(OPERATOR);
  }

  @Test
  void observationNeitherWritesNorComputesStatus() {
    noClasses()
        .that()
        .resideInAPackage(OBSERVE)
        .should()
        .dependOnClassesThat(
            resideInAPackage(APPLY).or(resideInAPackage(STATUS)).or(resideInAPackage(RECONCILE)))
        .check(OPERATOR);
  }

  @Test
  void statusCollectionDoesNotWrite() {
    noClasses()
        .that()
        .resideInAPackage(STATUS)
        .should()
        .dependOnClassesThat(resideInAPackage(APPLY).or(resideInAPackage(RECONCILE)))
        .orShould()
        .dependOnClassesThat(
            resideInAPackage("io.fabric8.kubernetes.client..")
                .and(not(name("io.fabric8.kubernetes.client.utils.Serialization"))))
        .because("status is computed from what was observed; the apply step writes it")
        .check(OPERATOR);
  }

  @Test
  void theApplyStepDoesNotComputeStatus() {
    noClasses()
        .that()
        .resideInAPackage(APPLY)
        .should()
        .dependOnClassesThat(resideInAPackage(STATUS).or(resideInAPackage(RECONCILE)))
        .check(OPERATOR);
  }
}
