package dev.soko.driver.volume;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The engine's locks, one per volume name, snapshot name, volume ID or snapshot ID, so that
 * duplicate calls for one object run one after the other while calls for different objects run in
 * parallel.
 *
 * <p>The order, which makes a deadlock impossible: a thread takes at most one name lock, then at
 * most one ID lock, and never a name lock while it holds an ID lock. A create takes its name first
 * (a retried CreateVolume or CreateSnapshot finds its own result), then its source's ID (a volume
 * or snapshot it copies cannot be deleted or grown underneath it); every other call takes one ID. A
 * call out of order fails at once with an {@link IllegalStateException} instead of deadlocking some
 * day under load.
 */
public final class VolumeLocks {

  /** What a lock guards; names rank before IDs. */
  enum Kind {
    VOLUME_NAME("volume-name:", 0),
    SNAPSHOT_NAME("snapshot-name:", 0),
    VOLUME("volume:", 1),
    SNAPSHOT("snapshot:", 1);

    private final String prefix;
    private final int rank;

    Kind(String prefix, int rank) {
      this.prefix = prefix;
      this.rank = rank;
    }
  }

  private final KeyedLocks locks = new KeyedLocks();
  private final ThreadLocal<Deque<Kind>> held = ThreadLocal.withInitial(ArrayDeque::new);

  public KeyedLocks.Held volumeName(String name) {
    return take(Kind.VOLUME_NAME, name);
  }

  public KeyedLocks.Held snapshotName(String name) {
    return take(Kind.SNAPSHOT_NAME, name);
  }

  public KeyedLocks.Held volume(String volumeId) {
    return take(Kind.VOLUME, volumeId);
  }

  public KeyedLocks.Held snapshot(String snapshotId) {
    return take(Kind.SNAPSHOT, snapshotId);
  }

  /** How many objects currently have a holder or waiter (for tests: nothing may leak). */
  int activeKeys() {
    return locks.activeKeys();
  }

  private KeyedLocks.Held take(Kind kind, String key) {
    Deque<Kind> mine = held.get();
    Kind last = mine.peek();
    if (last != null && last.rank >= kind.rank) {
      throw new IllegalStateException(
          "lock order: " + kind + " " + key + " taken while holding a " + last + " lock");
    }
    KeyedLocks.Held lock = locks.lock(kind.prefix + key);
    mine.push(kind);
    return () -> {
      mine.pop();
      lock.close();
    };
  }
}
