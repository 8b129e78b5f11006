package dev.soko.driver.backend.imagefile;

import dev.soko.driver.backend.VolumeBackend;
import dev.soko.driver.backend.VolumeStorageContract;
import dev.soko.driver.config.PoolConfig;
import dev.soko.driver.mount.FakeLoopDevices;
import dev.soko.driver.sys.LinuxSyscalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The storage contract for image files, in a temporary directory (sparse files, real cp). */
class ImageFileStorageTest extends VolumeStorageContract {
  private Path root;

  @Override
  protected PoolConfig.Backend kind() {
    return PoolConfig.Backend.IMAGE_FILE;
  }

  @Override
  protected VolumeBackend backend() {
    return new ImageFileBackend(new FakeLoopDevices(), new LinuxSyscalls());
  }

  @Override
  protected Path poolDirectory(String name) throws IOException {
    if (root == null) {
      root = Files.createTempDirectory("soko-image-storage-");
    }
    return Files.createDirectories(root.resolve(name));
  }

  @Override
  protected void release() throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
