package dev.soko.driver.volume;

import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A tree of files another node reads (a btrfs snapshot, or one taken of a volume for the read): its
 * root, which nothing changes while it is read, and what ends it. Closing it removes what was made
 * for the read (once, however often it is called).
 */
public final class FileTree implements AutoCloseable {
  private final String shown;
  private final Path root;
  private final Supplier<Optional<String>> gone;
  private final Runnable release;
  private boolean closed;

  /**
   * @param shown what the tree is, for messages ("snapshot X", "the read copy of volume X")
   * @param gone why the tree can no longer be answered for (its snapshot was deleted), or empty
   * @param release removes what was made for the read
   */
  public FileTree(String shown, Path root, Supplier<Optional<String>> gone, Runnable release) {
    this.shown = shown;
    this.root = root;
    this.gone = gone;
    this.release = release;
  }

  public String shown() {
    return shown;
  }

  public Path root() {
    return root;
  }

  /** Throws NOT_FOUND when the snapshot read was deleted since the read started. */
  public void checkPresent() {
    gone.get()
        .ifPresent(
            why -> {
              throw StorageException.notFound("%s; what was sent so far is not complete", why);
            });
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      release.run();
    }
  }
}
