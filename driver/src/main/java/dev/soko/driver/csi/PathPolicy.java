package dev.soko.driver.csi;

import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

/**
 * Staging and target paths come from the CO, so they are the one place where a request string names
 * a host path. A path is accepted only if it is absolute, already normal (no {@code .} or {@code
 * ..} segments), strictly below an allowed root (kubelet's directory), and its deepest existing
 * ancestor still resolves below that root once symlinks are followed. The engine mounts only paths
 * that passed here.
 */
public final class PathPolicy {
  private final List<Path> roots;
  private final List<Path> realRoots;

  public PathPolicy(List<Path> roots) {
    if (roots.isEmpty()) {
      throw new IllegalArgumentException("at least one allowed path root is required");
    }
    this.roots = roots.stream().map(Path::normalize).toList();
    this.realRoots = this.roots.stream().map(PathPolicy::realOrSelf).toList();
  }

  /** Checks a required path field and returns it as a {@link Path}. */
  public Path check(String raw, String field) {
    if (raw.isEmpty()) {
      throw StorageException.invalid("%s is required", field);
    }
    Requests.checkLength(raw, field, Requests.MAX_PATH_BYTES);
    if (raw.indexOf('\0') >= 0) {
      throw StorageException.invalid("%s contains a NUL character", field);
    }
    String trimmed =
        raw.length() > 1 && raw.endsWith("/") ? raw.substring(0, raw.length() - 1) : raw;
    Path path = Path.of(trimmed);
    if (!path.isAbsolute() || !path.normalize().toString().equals(trimmed)) {
      throw StorageException.invalid("%s must be an absolute, normalised path", field);
    }
    if (roots.stream().noneMatch(root -> path.startsWith(root) && !path.equals(root))) {
      throw StorageException.invalid("%s is not below an allowed path root %s", field, roots);
    }
    Path real = realOfDeepestExisting(path);
    // The second case: the root does not exist yet, so nothing below it can be a symlink.
    if (realRoots.stream().noneMatch(root -> real.startsWith(root) || root.startsWith(real))) {
      throw StorageException.invalid("%s resolves outside the allowed path roots", field);
    }
    return path;
  }

  /**
   * Checks a {@code volume_path} that only identifies where the CO believes a volume is (stats,
   * node expansion). The driver stages and publishes only below the allowed roots, so a path that
   * fails the policy cannot hold the volume: the spec's answer is NOT_FOUND, not INVALID_ARGUMENT.
   */
  public Path checkLookup(String raw, String field, String volumeId) {
    if (raw.isEmpty()) {
      throw StorageException.invalid("%s is required", field);
    }
    try {
      return check(raw, field);
    } catch (StorageException e) {
      throw StorageException.notFound(
          "volume %s is not staged or published at the given %s (%s)",
          volumeId, field, e.getMessage());
    }
  }

  private static Path realOfDeepestExisting(Path path) {
    Path existing = path;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return path;
    }
    try {
      return existing.toRealPath();
    } catch (IOException e) {
      // A dangling symlink or an unreadable component: nothing safe to mount through.
      throw StorageException.invalid("path %s cannot be resolved: %s", existing, e.getMessage());
    }
  }

  private static Path realOrSelf(Path root) {
    try {
      return Files.exists(root) ? root.toRealPath() : root;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot resolve allowed path root " + root, e);
    }
  }
}
