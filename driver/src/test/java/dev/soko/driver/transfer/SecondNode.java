package dev.soko.driver.transfer;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.pool.NodeLabels;
import dev.soko.driver.volume.HostFixture;
import dev.soko.driver.volume.LocalVolumeManager;
import dev.soko.driver.volume.RemoteSnapshots;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * A second node's engine in the same JVM as the {@link HostFixture}'s (whose node is {@code
 * node-it}): a pool of its own in a folder of the fixture, 1 GiB, ext4 and xfs volumes, the same
 * kubelet folder, so that two engines can talk over their data ports.
 */
final class SecondNode {
  static final long GIB = 1024 * HostFixture.MIB;

  private SecondNode() {}

  static LocalVolumeManager open(HostFixture host, String node, String pool) throws IOException {
    return LocalVolumeManager.open(config(host, node, pool));
  }

  /** As above, finding the snapshots and volumes it does not hold through {@code remote}. */
  static LocalVolumeManager open(HostFixture host, String node, String pool, RemoteSnapshots remote)
      throws IOException {
    return LocalVolumeManager.open(
        config(host, node, pool), NodeLabels.unknownBecause("not read in this test"), remote);
  }

  private static DriverConfig config(HostFixture host, String node, String pool)
      throws IOException {
    Path folder = Files.createDirectories(host.base.resolve("pool-" + pool));
    return DriverConfig.node(
        "csi.soko.dev",
        node,
        "unix:///tmp/unused-" + pool + ".sock",
        List.of(
            new PoolConfig(pool, folder, GIB, 1.0, new LinkedHashSet<>(List.of("ext4", "xfs")))),
        List.of(host.kubelet),
        64);
  }
}
