package dev.soko.driver.volume;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.function.Predicate;

/**
 * Pagination over items sorted by ID. The token is the last ID of the previous page, so a listing
 * stays correct while volumes are created and deleted between pages: the next page simply starts
 * after that ID, whether or not it still exists.
 */
final class Paging {
  private Paging() {}

  static <T> Page<T> page(
      NavigableMap<String, T> sorted, String token, int maxEntries, Predicate<String> validId) {
    if (maxEntries < 0) {
      throw StorageException.invalid("max_entries must not be negative");
    }
    NavigableMap<String, T> rest = sorted;
    if (token != null && !token.isEmpty()) {
      if (!validId.test(token)) {
        // The CSI spec answers a starting token it did not issue with ABORTED.
        throw new StorageException(StorageException.Reason.ABORTED, "invalid starting token");
      }
      rest = sorted.tailMap(token, false);
    }
    List<T> items = new ArrayList<>();
    String last = "";
    for (Map.Entry<String, T> entry : rest.entrySet()) {
      if (maxEntries > 0 && items.size() == maxEntries) {
        return new Page<>(items, last);
      }
      items.add(entry.getValue());
      last = entry.getKey();
    }
    return new Page<>(items, "");
  }
}
