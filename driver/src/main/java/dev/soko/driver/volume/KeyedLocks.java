package dev.soko.driver.volume;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per key (a volume name, a volume ID, ...), created on demand and dropped when no thread
 * holds or waits for it, so concurrent duplicate calls for one volume run one after the other while
 * calls for different volumes run in parallel.
 */
public final class KeyedLocks {

  /** A held lock; closing it releases it. */
  public interface Held extends AutoCloseable {
    @Override
    void close();
  }

  private static final class Entry {
    final ReentrantLock lock = new ReentrantLock();
    int users;
  }

  private final Map<String, Entry> entries = new HashMap<>();

  public Held lock(String key) {
    Entry entry;
    synchronized (entries) {
      entry = entries.computeIfAbsent(key, k -> new Entry());
      entry.users++;
    }
    entry.lock.lock();
    return () -> {
      entry.lock.unlock();
      synchronized (entries) {
        if (--entry.users == 0) {
          entries.remove(key);
        }
      }
    };
  }

  /** How many keys currently have a holder or waiter (for tests: nothing may leak). */
  public int activeKeys() {
    synchronized (entries) {
      return entries.size();
    }
  }
}
