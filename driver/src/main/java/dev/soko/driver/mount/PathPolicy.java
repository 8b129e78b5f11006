package dev.soko.driver.mount;

import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides whether a staging or target path from a request may be touched. A path must be absolute,
 * already normalised (no ".", "..", or doubled separators), lie strictly under one of the allowed
 * roots, not be a symlink itself, and its nearest existing ancestor must resolve (following
 * symlinks) to a place still under that root.
 */
public final class PathPolicy {
  private static final int MAX_LENGTH = 4096;
  private final List<Path> roots;

  public PathPolicy(List<Path> roots) {
    this.roots = List.copyOf(roots);
  }

  public Path check(String what, Path path) {
    if (path == null || path.toString().isEmpty()) {
      throw StorageException.invalid("%s is required", what);
    }
    String text = path.toString();
    if (text.length() > MAX_LENGTH || text.chars().anyMatch(Character::isISOControl)) {
      throw StorageException.invalid("%s is too long or contains control characters", what);
    }
    if (!path.isAbsolute()) {
      throw StorageException.invalid("%s must be absolute: %s", what, MountOptions.printable(text));
    }
    if (!path.normalize().toString().equals(text)) {
      throw StorageException.invalid(
          "%s must be normalised: %s", what, MountOptions.printable(text));
    }
    for (Path root : roots) {
      if (path.startsWith(root) && !path.equals(root)) {
        checkResolvesUnder(what, path, root);
        return path;
      }
    }
    throw StorageException.invalid(
        "%s %s is outside the allowed roots %s", what, MountOptions.printable(text), roots);
  }

  public Path check(String what, String path) {
    if (path == null || path.isEmpty()) {
      throw StorageException.invalid("%s is required", what);
    }
    try {
      return check(what, Path.of(path));
    } catch (java.nio.file.InvalidPathException e) {
      throw StorageException.invalid("%s is not a valid path", what);
    }
  }

  private static void checkResolvesUnder(String what, Path path, Path root) {
    if (Files.isSymbolicLink(path)) {
      throw StorageException.invalid("%s must not be a symlink", what);
    }
    Path existing = path;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      throw StorageException.invalid("%s has no existing ancestor", what);
    }
    try {
      Path realRoot = Files.exists(root) ? root.toRealPath() : root;
      Path real = existing.toRealPath();
      if (!real.startsWith(realRoot)) {
        throw StorageException.invalid("%s resolves outside its allowed root", what);
      }
    } catch (IOException e) {
      throw StorageException.invalid("%s cannot be resolved: %s", what, e.getMessage());
    }
  }

  public List<Path> roots() {
    return new ArrayList<>(roots);
  }
}
