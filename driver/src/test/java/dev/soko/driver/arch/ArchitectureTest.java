package dev.soko.driver.arch;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.AccessTarget.Predicates.declaredIn;
import static com.tngtech.archunit.core.domain.JavaAccess.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.INTERFACES;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableFrom;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noFields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noMembers;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noMethods;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.soko.driver.attribute.AttributeEffects;
import dev.soko.driver.attribute.AttributeKind;
import dev.soko.driver.backend.AttachedDevice;
import dev.soko.driver.backend.Backends;
import dev.soko.driver.backend.CopyForm;
import dev.soko.driver.backend.MountIdentity;
import dev.soko.driver.backend.StorageTraits;
import dev.soko.driver.backend.VolumeSpace;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.failure.TypedFailure;
import dev.soko.driver.mount.LoopDevice;
import dev.soko.driver.mount.LoopDevices;
import dev.soko.driver.pool.ImageFiles;
import dev.soko.driver.pool.Pool;
import dev.soko.driver.pool.PoolException;
import dev.soko.driver.volume.Failures;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.VolumeManager;
import org.junit.jupiter.api.Test;

/**
 * The driver's structure as tests, so a review finding cannot come back unnoticed. Production
 * classes only: a test fake may reach across packages to set a scene. Plain Jupiter tests calling
 * {@code check} rather than ArchUnit's own engine, so that surefire's {@code -Dtest} filter and the
 * project's JUnit platform version select and run them like every other test.
 */
class ArchitectureTest {
  /** The backend package's classes that are not interfaces and that others may use. */
  private static final Class<?>[] BACKEND_API = {
    Backends.class,
    StorageTraits.class,
    MountIdentity.class,
    VolumeSpace.class,
    CopyForm.class,
    AttachedDevice.class
  };

  private static final JavaClasses DRIVER =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("dev.soko.driver");

  /**
   * Each top-level package is a layer or a leaf; a cycle between two of them means neither can be
   * understood, tested or replaced alone (the review found mount, exec, pool and state importing
   * volume for its exception).
   */
  @Test
  void theDriversPackagesHaveNoCycles() {
    slices().matching("dev.soko.driver.(*)..").should().beFreeOfCycles().check(DRIVER);
  }

  /**
   * The services and the engine (provisioning, staging, expansion, recovery) reach storage only
   * through {@code backend.VolumeBackend}, so another backend (LVM, ZFS, a raw partition) plugs in
   * without touching them; the devices they see are {@link AttachedDevice}s, never loop devices.
   * Only the engine's wiring ({@link LocalVolumeManager}) hands the loop devices to the backends'
   * factory.
   */
  @Test
  void onlyTheWiringKnowsTheImageFileBackend() {
    noClasses()
        .that()
        .resideInAnyPackage("dev.soko.driver.csi..", "dev.soko.driver.volume..")
        .and()
        .doNotBelongToAnyOf(LocalVolumeManager.class)
        .should()
        .dependOnClassesThat(
            belongToAnyOf(ImageFiles.class, LoopDevice.class).or(assignableTo(LoopDevices.class)))
        .orShould()
        .callMethod(Pool.class, "locations")
        .orShould()
        .callMethod(Pool.class, "volumesDir")
        .orShould()
        .callMethod(Pool.class, "snapshotsDir")
        .check(DRIVER);
  }

  /**
   * The code every backend shares (the services, the engine, the pool layer) is not named for the
   * first one: no class, field or method named for loop devices, and no image file in the pool's
   * API, its failures' kinds or the engine's API ({@link VolumeManager} and what it extends). The
   * one exception is recovery's report, whose field names are the text its log line has always had.
   * What is truly the image-file backend's lives in {@code backend/imagefile}.
   */
  @Test
  void theSharedCodeIsNotNamedForImageFiles() {
    String[] shared = {
      "dev.soko.driver.csi..", "dev.soko.driver.volume..", "dev.soko.driver.pool.."
    };
    noClasses()
        .that()
        .resideInAnyPackage(shared)
        .should()
        .haveSimpleNameContaining("Loop")
        .check(DRIVER);
    noMembers()
        .that()
        .areDeclaredInClassesThat()
        .resideInAnyPackage(shared)
        .and()
        .areDeclaredInClassesThat()
        .doNotHaveFullyQualifiedName("dev.soko.driver.volume.Recovery$Report")
        .should()
        .haveNameMatching("(?i).*loop.*")
        .check(DRIVER);
    noMethods()
        .that()
        .arePublic()
        .and()
        .areDeclaredInClassesThat(belongToAnyOf(Pool.class).or(assignableFrom(VolumeManager.class)))
        .should()
        .haveNameMatching("(?i).*(image|files).*")
        .check(DRIVER);
    noFields()
        .that()
        .areDeclaredIn(PoolException.Kind.class)
        .should()
        .haveNameMatching(".*IMAGE.*")
        .check(DRIVER);
  }

  /**
   * The engine and the services never name a backend: no implementation class, nothing of the btrfs
   * package, and no {@link PoolConfig.Backend} constant (whose comparisons were how the engine once
   * asked which backend it had). A third backend is a package of its own and one line in {@link
   * Backends}, and changes no class here.
   */
  @Test
  void theEngineNeverAsksWhichBackendItHas() {
    noClasses()
        .that()
        .resideInAnyPackage("dev.soko.driver.csi..", "dev.soko.driver.volume..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("dev.soko.driver.btrfs..")
                // its typed failure, which Failures maps as it maps every layer's
                .and(not(belongTo(assignableTo(TypedFailure.class))))
                .or(
                    resideInAPackage("dev.soko.driver.backend..")
                        .and(not(INTERFACES))
                        .and(not(belongToAnyOf(BACKEND_API)))))
        .orShould()
        .accessFieldWhere(target(declaredIn(PoolConfig.Backend.class)))
        .check(DRIVER);
  }

  /**
   * The pool layer (directories, records, accounting, the common directory checks) names no
   * backend: no implementation, no backend library (btrfs), no loop device and no comparison with a
   * {@link PoolConfig.Backend} constant. What a backend needs of a pool directory is its own {@code
   * checkPool}.
   */
  @Test
  void thePoolLayerNamesNoBackend() {
    noClasses()
        .that()
        .resideInAPackage("dev.soko.driver.pool..")
        .should()
        .dependOnClassesThat(
            resideInAnyPackage("dev.soko.driver.btrfs..", "dev.soko.driver.backend..")
                .or(belongToAnyOf(LoopDevice.class))
                .or(assignableTo(LoopDevices.class)))
        .orShould()
        .accessFieldWhere(target(declaredIn(PoolConfig.Backend.class)))
        .check(DRIVER);
  }

  /**
   * Each backend is a package of its own below {@code backend}: one backend never reaches into
   * another, and none reaches up into the engine or the services, so a backend can be added or
   * removed alone.
   */
  @Test
  void eachBackendPackageStandsAlone() {
    slices()
        .matching("dev.soko.driver.backend.(*)..")
        .should()
        .notDependOnEachOther()
        .check(DRIVER);
    noClasses()
        .that()
        .resideInAPackage("dev.soko.driver.backend..")
        .should()
        .dependOnClassesThat(
            resideInAnyPackage("dev.soko.driver.volume..", "dev.soko.driver.csi.."))
        .check(DRIVER);
  }

  /**
   * Outside the backend package a backend is reached through its interfaces, the values they return
   * and the factory, {@link Backends}: never through an implementation.
   */
  @Test
  void backendsAreReachedThroughTheirInterfacesAndTheFactory() {
    noClasses()
        .that()
        .resideOutsideOfPackage("dev.soko.driver.backend..")
        .should()
        .dependOnClassesThat(
            resideInAPackage("dev.soko.driver.backend..")
                .and(not(INTERFACES))
                .and(not(belongToAnyOf(BACKEND_API))))
        .check(DRIVER);
  }

  /**
   * A typed failure carries its own reason ({@link TypedFailure#reason}), so {@link Failures} maps
   * reasons and names no package's failure: a new library's failure (a backend's, say) changes
   * nothing in the engine. It was once an {@code instanceof} per library.
   */
  @Test
  void failuresNamesNoPackagesFailure() {
    noClasses()
        .that()
        .belongToAnyOf(Failures.class)
        .should()
        .dependOnClassesThat(
            assignableTo(TypedFailure.class).and(not(belongToAnyOf(TypedFailure.class))))
        .check(DRIVER);
  }

  /**
   * A kind of per-volume attribute (IO limits, and the kinds after it) is reached through the
   * registry: the services and the engine never name one, except the engine's list of kinds and the
   * IO limits' entry point that the node's wiring calls ({@code LocalVolumeManager.limitIo}). A new
   * kind is a package of its own and one line in that list.
   */
  @Test
  void theEngineReachesAttributeKindsOnlyThroughTheRegistry() {
    noClasses()
        .that()
        .resideInAnyPackage("dev.soko.driver.csi..", "dev.soko.driver.volume..")
        .and()
        .doNotBelongToAnyOf(LocalVolumeManager.class)
        .and()
        .doNotHaveSimpleName("AttributeKinds")
        .should()
        .dependOnClassesThat(
            assignableTo(AttributeKind.class)
                .or(assignableTo(AttributeEffects.class))
                .and(not(INTERFACES)))
        .check(DRIVER);
  }
}
