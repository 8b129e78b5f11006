package dev.soko.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.PoolBackend;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What a pool's backend changes in the render: the driver's --pool flag and the filesystem of the
 * pool's storage classes. An ImageFile pool (the default) renders as before the field existed.
 */
class PoolBackendRenderTest {
  private static final String SAMPLE_FLAG =
      "name=nvme,path=/var/lib/soko/nvme,capacity=100Gi,overprovision=2.0,fs=xfs:ext4";

  @Test
  void anImageFilePoolNamesNoBackendSoExistingFlagsStayAsTheyWere() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec pool = sc.getSpec().getPools().get(0);
    assertThat(NodeDaemonSet.poolFlag(pool)).isEqualTo(SAMPLE_FLAG);
    pool.setBackend(PoolBackend.ImageFile);
    assertThat(NodeDaemonSet.poolFlag(pool)).isEqualTo(SAMPLE_FLAG);
    pool.setBackend(null); // a spec read from an older CRD, without the field
    assertThat(NodeDaemonSet.poolFlag(pool)).isEqualTo(SAMPLE_FLAG);
  }

  /** The flag of the shared contract: --pool name=fast,path=...,backend=btrfs-subvolume. */
  @Test
  void aBtrfsSubvolumePoolTellsTheDriverItsBackendAndNoFilesystemList() {
    StorageCluster sc = btrfsSample();
    assertThat(driverArgs(sc))
        .contains(
            "--pool=name=nvme,path=/var/lib/soko/nvme,backend=btrfs-subvolume,capacity=100Gi"
                + ",overprovision=2.0");
    sc.getSpec().getPools().get(0).setFsTypes(null);
    sc.getSpec().getPools().get(0).setCapacity(null);
    sc.getSpec().getPools().get(0).setOverprovisionRatio(1.0);
    assertThat(driverArgs(sc))
        .contains("--pool=name=nvme,path=/var/lib/soko/nvme,backend=btrfs-subvolume");
  }

  @Test
  void onlyTheBtrfsPoolOfTwoGetsTheBackendField() {
    StorageCluster sc = btrfsSample();
    PoolSpec images = new PoolSpec();
    images.setName("bulk");
    images.setPath("/var/lib/soko/bulk");
    sc.getSpec().getPools().add(images);
    assertThat(driverArgs(sc).stream().filter(a -> a.startsWith("--pool=")))
        .containsExactly(
            "--pool=name=nvme,path=/var/lib/soko/nvme,backend=btrfs-subvolume,capacity=100Gi"
                + ",overprovision=2.0",
            "--pool=name=bulk,path=/var/lib/soko/bulk");
  }

  @Test
  void aBtrfsPoolsClassesGetFsTypeBtrfsGivenOrNot() {
    StorageCluster sc = btrfsSample();
    StorageClassSpec unset = storageClass("soko-nvme-default", "nvme", null);
    sc.getSpec().getStorageClasses().add(unset);
    assertThat(fsTypes(sc))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("soko-nvme", "btrfs", "soko-nvme-default", "btrfs"));
  }

  @Test
  void aClassWithoutFsTypeOnAnImageFilePoolGetsExt4AsBefore() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setFsTypes(null);
    sc.getSpec().getStorageClasses().get(0).setFsType(null);
    assertThat(fsTypes(sc)).containsExactlyEntriesOf(Map.of("soko-nvme", "ext4"));
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
  }

  /** The sample with its pool on btrfs: backend BtrfsSubvolume, fsTypes [btrfs], class btrfs. */
  static StorageCluster btrfsSample() {
    StorageCluster sc = Fixtures.sample();
    PoolSpec pool = sc.getSpec().getPools().get(0);
    pool.setBackend(PoolBackend.BtrfsSubvolume);
    pool.setFsTypes(List.of(FsType.btrfs));
    sc.getSpec().getStorageClasses().get(0).setFsType(FsType.btrfs);
    assertThat(SpecValidator.problems(sc.getSpec())).as("a valid spec").isEmpty();
    return sc;
  }

  static StorageClassSpec storageClass(String name, String pool, FsType fsType) {
    StorageClassSpec c = new StorageClassSpec();
    c.setName(name);
    c.setPool(pool);
    c.setFsType(fsType);
    return c;
  }

  private static List<String> driverArgs(StorageCluster sc) {
    return Fixtures.container(Fixtures.nodePod(Fixtures.desired(sc, "1.34")), "soko-driver")
        .getArgs();
  }

  private static Map<String, String> fsTypes(StorageCluster sc) {
    return Fixtures.desired(sc, "1.34").storageClasses().stream()
        .collect(
            Collectors.toMap(
                s -> s.getMetadata().getName(), PoolBackendRenderTest::fsTypeParameter));
  }

  private static String fsTypeParameter(StorageClass s) {
    return s.getParameters().get(StorageObjects.FSTYPE_PARAMETER);
  }
}
