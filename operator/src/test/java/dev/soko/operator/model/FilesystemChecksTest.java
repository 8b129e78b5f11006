package dev.soko.operator.model;

import static dev.soko.operator.model.PoolBackendRenderTest.btrfsSample;
import static dev.soko.operator.model.PoolBackendRenderTest.storageClass;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.StorageCluster;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The filesystem rules of the CRD as {@code render} (no API server) and an older CRD see them
 * ({@link SpecValidator}, which keeps the operator from applying a spec the driver cannot serve).
 */
class FilesystemChecksTest {
  @Test
  void aBtrfsPoolMayListBtrfsOnly() {
    StorageCluster sc = btrfsSample();
    sc.getSpec().getPools().get(0).setFsTypes(List.of(FsType.btrfs, FsType.xfs));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("BtrfsSubvolume pool 'nvme' may name btrfs only, not xfs");
  }

  @Test
  void anImageFilePoolMayNotListBtrfs() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setFsTypes(List.of(FsType.xfs, FsType.btrfs));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .singleElement()
        .asString()
        .contains("pool 'nvme' may name btrfs only with backend BtrfsSubvolume");
  }

  @Test
  void aClassOnABtrfsPoolMustBeBtrfs() {
    StorageCluster sc = btrfsSample();
    sc.getSpec().getPools().get(0).setFsTypes(null);
    sc.getSpec().getStorageClasses().get(0).setFsType(FsType.ext4);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.storageClasses[].fsType of class 'soko-nvme' is ext4, but pool 'nvme' is"
                + " BtrfsSubvolume: it serves btrfs only");
  }

  @Test
  void aBtrfsClassNeedsABtrfsPool() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setFsTypes(null);
    sc.getSpec().getStorageClasses().get(0).setFsType(FsType.btrfs);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.storageClasses[].fsType of class 'soko-nvme' is btrfs, which needs a"
                + " BtrfsSubvolume pool; pool 'nvme' is ImageFile");
  }

  /** The default counts: a class naming no fsType is ext4, which an xfs-only pool refuses. */
  @Test
  void aClassFilesystemMustBeAmongItsPoolsGivenOrDefaulted() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setFsTypes(List.of(FsType.xfs));
    sc.getSpec().getStorageClasses().add(storageClass("plain", "nvme", null));
    sc.getSpec().getStorageClasses().add(storageClass("also-xfs", "nvme", FsType.xfs));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.storageClasses[].fsType of class 'plain' is ext4 (its pool's default), not among"
                + " the fsTypes [xfs] of pool 'nvme'");
  }

  @Test
  void aBtrfsPoolWithoutFsTypesAndAClassWithoutFsTypeIsFine() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setBackend(PoolBackend.BtrfsSubvolume);
    sc.getSpec().getPools().get(0).setFsTypes(null);
    sc.getSpec().getStorageClasses().get(0).setFsType(null);
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
  }
}
