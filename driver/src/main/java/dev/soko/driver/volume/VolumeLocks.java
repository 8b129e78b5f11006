package dev.soko.driver.volume;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.TreeSet;

/**
 * The engine's locks, one per volume name, snapshot name, group snapshot name, volume ID, snapshot
 * ID or group snapshot ID, so that duplicate calls for one object run one after the other while
 * calls for different objects run in parallel.
 *
 * <p>The order, which makes a deadlock impossible: names, then a group snapshot's ID, then volume
 * and snapshot IDs. A thread takes at most one name lock and never a lock of a lower rank than one
 * it holds. A create takes its name first (a retried CreateVolume or CreateSnapshot finds its own
 * result), then its source's ID (a volume or snapshot it copies cannot be deleted or grown
 * underneath it); every other call takes one ID. Two calls hold more than one lock of the last
 * rank: a group snapshot's create takes every member volume's lock, all at once and in ID order
 * ({@link #volumes}), and its delete takes each member snapshot's lock in turn under its group's. A
 * call out of order fails at once with an {@link IllegalStateException} instead of deadlocking some
 * day under load.
 */
public final class VolumeLocks {

  /** What a lock guards; names rank before a group's ID, which ranks before the other IDs. */
  enum Kind {
    VOLUME_NAME("volume-name:", 0),
    SNAPSHOT_NAME("snapshot-name:", 0),
    GROUP_NAME("group-name:", 0),
    GROUP("group:", 1),
    VOLUME("volume:", 2),
    SNAPSHOT("snapshot:", 2);

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

  public KeyedLocks.Held groupName(String name) {
    return take(Kind.GROUP_NAME, name);
  }

  public KeyedLocks.Held group(String groupId) {
    return take(Kind.GROUP, groupId);
  }

  public KeyedLocks.Held volume(String volumeId) {
    return take(Kind.VOLUME, volumeId);
  }

  /**
   * The locks of several volumes, taken in ID order and released together. Two such calls that
   * share volumes take them in the same order, and every other call waits for at most one volume
   * while it holds none, so no cycle can form.
   */
  public KeyedLocks.Held volumes(Collection<String> volumeIds) {
    Deque<KeyedLocks.Held> taken = new ArrayDeque<>();
    try {
      for (String id : new TreeSet<>(volumeIds)) {
        taken.push(taken.isEmpty() ? volume(id) : take(Kind.VOLUME, id, true));
      }
    } catch (RuntimeException e) {
      releaseAll(taken);
      throw e;
    }
    return () -> releaseAll(taken);
  }

  private static void releaseAll(Deque<KeyedLocks.Held> taken) {
    while (!taken.isEmpty()) {
      taken.pop().close();
    }
  }

  public KeyedLocks.Held snapshot(String snapshotId) {
    return take(Kind.SNAPSHOT, snapshotId);
  }

  /** How many objects currently have a holder or waiter (for tests: nothing may leak). */
  int activeKeys() {
    return locks.activeKeys();
  }

  private KeyedLocks.Held take(Kind kind, String key) {
    return take(kind, key, false);
  }

  /**
   * @param nextInOrder the caller takes several locks of this kind in key order ({@link #volumes})
   */
  private KeyedLocks.Held take(Kind kind, String key, boolean nextInOrder) {
    Deque<Kind> mine = held.get();
    Kind last = mine.peek();
    boolean sameKindInOrder = nextInOrder && last == kind;
    if (last != null && last.rank >= kind.rank && !sameKindInOrder) {
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
