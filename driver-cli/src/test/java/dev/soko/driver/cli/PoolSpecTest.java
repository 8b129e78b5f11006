package dev.soko.driver.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.PoolConfig;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PoolSpecTest {
  /** The very text the operator renders (DesiredStateTest): the flag's two ends agree. */
  @Test
  void theOperatorsNodeSelectorFieldsParseToTheLabelMap() {
    PoolConfig pool =
        PoolSpec.parse(
            "name=nvme,path=/var/lib/soko/nvme,capacity=100Gi,overprovision=2.0,fs=xfs:ext4"
                + ",nodeSelector:empty=,nodeSelector:node.kubernetes.io/instance-type=m5.large"
                + ",nodeSelector:soko.dev/disk=nvme");
    assertThat(pool.nodeSelector())
        .isEqualTo(
            Map.of(
                "empty", "",
                "node.kubernetes.io/instance-type", "m5.large",
                "soko.dev/disk", "nvme"));
    assertThat(pool.capacityBytes()).isEqualTo(100L << 30);
    assertThat(PoolSpec.parse("name=p,path=/p").nodeSelector()).as("every node").isEmpty();
  }

  @Test
  void aSelectorThatIsNoLabelOrGivenTwiceIsRefused() {
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:bad key=x"))
        .hasMessageContaining("'bad key' is not a label key");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:=x"))
        .hasMessageContaining("is not a label key");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:Example.com/x=y"))
        .as("the prefix is a DNS subdomain, lower case")
        .hasMessageContaining("is not a label key");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:disk=a=b"))
        .hasMessageContaining("'a=b' (of disk) is not a label value");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:disk=-x"))
        .hasMessageContaining("is not a label value");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:disk=" + "a".repeat(64)))
        .hasMessageContaining("is not a label value");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,nodeSelector:d=a,nodeSelector:d=b"))
        .hasMessageContaining("'d' given twice");
    assertThatThrownBy(() -> PoolSpec.parse("name=p,path=/p,selector:d=a"))
        .hasMessageContaining("unknown key 'selector:d'");
  }

  @Test
  void aPoolIsAnImageFilePoolUnlessItsBackendSaysOtherwise() {
    PoolConfig plain = PoolSpec.parse("name=p,path=/p");
    assertThat(plain.backend()).isEqualTo(PoolConfig.Backend.IMAGE_FILE);
    assertThat(plain.fsTypes()).containsExactly("ext4", "xfs");
    assertThat(PoolSpec.parse("name=p,path=/p,backend=image-file,fs=xfs").fsTypes())
        .containsExactly("xfs");

    PoolConfig btrfs = PoolSpec.parse("name=fast,path=/var/lib/soko/fast,backend=btrfs-subvolume");
    assertThat(btrfs.backend()).isEqualTo(PoolConfig.Backend.BTRFS_SUBVOLUME);
    assertThat(btrfs.fsTypes()).as("its volumes are btrfs, nothing else").containsExactly("btrfs");
    assertThat(PoolSpec.parse("name=f,path=/f,backend=btrfs-subvolume,fs=btrfs").fsTypes())
        .containsExactly("btrfs");
  }

  @Test
  void aBtrfsPoolWithAnotherFilesystemOrAnUnknownBackendIsAConfigError() {
    assertThatThrownBy(() -> PoolSpec.parse("name=f,path=/f,backend=btrfs-subvolume,fs=ext4"))
        .hasMessageContaining("fs=ext4 is not possible with backend=btrfs-subvolume")
        .hasMessageContaining("leave fs out or say fs=btrfs");
    assertThatThrownBy(() -> PoolSpec.parse("name=f,path=/f,backend=btrfs-subvolume,fs=btrfs:xfs"))
        .hasMessageContaining("fs=btrfs:xfs is not possible");
    assertThatThrownBy(() -> PoolSpec.parse("name=f,path=/f,fs=btrfs"))
        .as("an image-file pool makes ext4 and xfs only")
        .hasMessageContaining("btrfs volumes need backend=btrfs-subvolume");
    assertThatThrownBy(() -> PoolSpec.parse("name=f,path=/f,backend=zfs"))
        .hasMessageContaining("backend 'zfs' is unknown (known: [image-file, btrfs-subvolume])");
    assertThatThrownBy(() -> PoolSpec.parse("name=f,path=/f,backend=BtrfsSubvolume"))
        .as("the flag's spelling, not the CRD's")
        .hasMessageContaining("is unknown");
  }

  @Test
  void formatIsTheInverseOfParse() {
    for (String spec :
        List.of(
            "name=p,path=/p",
            "name=nvme,path=/var/lib/soko/nvme,capacity=107374182400,overprovision=2.5,fs=xfs:ext4"
                + ",requireMountPoint=true,allowRootFilesystem=true"
                + ",nodeSelector:empty=,nodeSelector:soko.dev/disk=nvme",
            "name=one,path=/one,fs=xfs",
            "name=fast,path=/fast,backend=btrfs-subvolume")) {
      PoolConfig pool = PoolSpec.parse(spec);
      assertThat(PoolSpec.format(pool)).as("canonical text").isEqualTo(spec);
      PoolConfig again = PoolSpec.parse(PoolSpec.format(pool));
      assertThat(again).isEqualTo(pool);
      assertThat(again.fsTypes())
          .as("the default filesystem stays first")
          .containsExactlyElementsOf(pool.fsTypes());
    }
  }

  @Test
  void formatLeavesOutWhatIsAtItsDefault() {
    PoolConfig spelledOut =
        PoolSpec.parse(
            "name=p,path=/p/./x/,capacity=0,overprovision=1.0,fs=ext4:xfs,requireMountPoint=false"
                + ",allowRootFilesystem=false,backend=image-file");
    assertThat(PoolSpec.format(spelledOut)).isEqualTo("name=p,path=/p/x");
    assertThat(PoolSpec.format(PoolSpec.parse("name=b,path=/b,backend=btrfs-subvolume,fs=btrfs")))
        .isEqualTo("name=b,path=/b,backend=btrfs-subvolume");
    assertThat(PoolSpec.format(PoolSpec.parse("name=q,path=/q,capacity=100Gi")))
        .as("a quantity is written in bytes")
        .isEqualTo("name=q,path=/q,capacity=107374182400");
  }
}
