package dev.soko.driver.mount;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Staging and target paths come from the CO, so they are the one place where a request string names
 * a host path. A path is accepted only if it is absolute, already normalised (no ".", "..", or
 * doubled separators), strictly below an allowed root (kubelet's directory), not a symlink itself,
 * and its deepest existing ancestor still resolves (following symlinks) below that root. The gRPC
 * layer checks request strings with it and the engine checks again before it mounts anything.
 */
public final class PathPolicy {
  /** PATH_MAX: the kernel refuses longer paths anyway. */
  static final int MAX_PATH_BYTES = 4096;

  /** NAME_MAX: the longest file name, one component of a path, that Linux file systems take. */
  static final int MAX_NAME_BYTES = 255;

  private final List<Path> roots;

  public PathPolicy(List<Path> roots) {
    this.roots = roots.stream().map(Path::normalize).toList();
  }

  /** Checks a path field as a request spells it ({@code what} names the field in errors). */
  public Path check(String what, String raw) {
    if (raw == null || raw.isEmpty()) {
      throw MountException.refused("%s is required", what);
    }
    if (raw.length() > MAX_PATH_BYTES
        || raw.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
      throw MountException.refused("%s is longer than %d bytes", what, MAX_PATH_BYTES);
    }
    if (raw.chars().anyMatch(Character::isISOControl)) {
      throw MountException.refused("%s contains control characters", what);
    }
    // Path.of quietly drops a trailing slash and doubled separators; compare the text instead.
    String trimmed =
        raw.length() > 1 && raw.endsWith("/") ? raw.substring(0, raw.length() - 1) : raw;
    Path path;
    try {
      path = Path.of(trimmed);
    } catch (InvalidPathException e) {
      throw MountException.refused("%s is not a valid path", what);
    }
    if (path.isAbsolute() && !path.normalize().toString().equals(trimmed)) {
      throw MountException.refused(
          "%s must be normalised: %s", what, MountOptions.printable(trimmed));
    }
    return check(what, path);
  }

  /** Checks a path the engine is about to touch. */
  public Path check(String what, Path path) {
    if (path == null || path.toString().isEmpty()) {
      throw MountException.refused("%s is required", what);
    }
    String text = path.toString();
    if (!path.isAbsolute()) {
      throw MountException.refused("%s must be absolute: %s", what, MountOptions.printable(text));
    }
    if (!path.normalize().toString().equals(text)) {
      throw MountException.refused("%s must be normalised: %s", what, MountOptions.printable(text));
    }
    for (Path name : path) {
      if (name.toString().getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
        throw MountException.refused(
            "%s has a component longer than %d bytes", what, MAX_NAME_BYTES);
      }
    }
    for (Path root : roots) {
      if (path.startsWith(root) && !path.equals(root)) {
        checkResolvesUnder(what, path, root);
        return path;
      }
    }
    throw MountException.refused(
        "%s %s is not below an allowed path root %s", what, MountOptions.printable(text), roots);
  }

  private static void checkResolvesUnder(String what, Path path, Path root) {
    Path existing = path;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      throw MountException.refused("%s has no existing ancestor", what);
    }
    try {
      Path realRoot = Files.exists(root) ? root.toRealPath() : root;
      if (!existing.toRealPath().startsWith(realRoot)) {
        throw MountException.refused("%s resolves outside the allowed path roots", what);
      }
    } catch (IOException e) {
      // A dangling symlink or an unreadable component: nothing safe to mount through.
      throw MountException.refused("%s cannot be resolved: %s", what, e.getMessage());
    }
    if (Files.isSymbolicLink(path)) {
      throw MountException.refused("%s must not be a symlink", what);
    }
  }

  public List<Path> roots() {
    return new ArrayList<>(roots);
  }
}
