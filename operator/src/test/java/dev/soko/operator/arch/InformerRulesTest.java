package dev.soko.operator.arch;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaAccess.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import org.junit.jupiter.api.Test;

/**
 * The owned-kind registry is the only list of kinds the operator watches: every informer is built
 * by {@code reconcile.kinds.OwnedEventSources} from a registry entry. A watch declared anywhere
 * else (a fabric8 {@code inform}, {@code informers()} or {@code watch}, or a JOSDK informer event
 * source) would be a second list, with its own cache, RBAC and request cost that the registry's
 * tests do not see.
 */
class InformerRulesTest {
  private static final JavaClasses OPERATOR =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("dev.soko.operator");

  private static final String REGISTRY_SOURCES =
      "dev.soko.operator.reconcile.kinds.OwnedEventSources";

  @Test
  void onlyTheRegistrysEventSourcesStartInformers() {
    noClasses()
        .that(not(name(REGISTRY_SOURCES)))
        .should()
        .callMethodWhere(
            target(nameMatching("inform|runnableInformer|informers|watch|watchList"))
                .and(target(owner(resideInAPackage("io.fabric8.kubernetes.client..")))))
        .orShould()
        .callConstructorWhere(target(owner(assignableTo(InformerEventSource.class))))
        .orShould()
        .callMethodWhere(target(owner(assignableTo(InformerEventSourceConfiguration.class))))
        .because("informers are declared in reconcile.kinds.KindRegistry and built in one place")
        .check(OPERATOR);
  }
}
