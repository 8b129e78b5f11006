package dev.soko.driver.csi;

import dev.soko.driver.volume.StorageException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Field checks shared by every service. Limits follow the CSI spec's size table: IDs and names are
 * "generic strings" (128 bytes), paths are "large strings" (4 KiB), maps hold at most 128 entries.
 * Oversized input is refused before it reaches the engine or a log line.
 */
final class Requests {
  static final int MAX_ID_BYTES = 128;
  static final int MAX_PATH_BYTES = 4096;
  static final int MAX_MAP_ENTRIES = 128;
  static final int MAX_MAP_VALUE_BYTES = 1024;

  private Requests() {}

  /** A required identifier or name: non-empty, at most 128 bytes, no control characters. */
  static String requireId(String value, String field) {
    if (value.isEmpty()) {
      throw StorageException.invalid("%s is required", field);
    }
    checkLength(value, field, MAX_ID_BYTES);
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw StorageException.invalid("%s contains a control character", field);
      }
    }
    return value;
  }

  /** An optional identifier: empty is allowed, otherwise checked like {@link #requireId}. */
  static String optionalId(String value, String field) {
    return value.isEmpty() ? value : requireId(value, field);
  }

  static void checkLength(String value, String field, int maxBytes) {
    // Cheap bound first: a UTF-8 byte count is never below the char count.
    if (value.length() > maxBytes || value.getBytes(StandardCharsets.UTF_8).length > maxBytes) {
      throw StorageException.invalid("%s is longer than %d bytes", field, maxBytes);
    }
  }

  /** Bounds a string map (secrets, contexts, parameters) without looking at its values' meaning. */
  static void checkMap(Map<String, String> map, String field) {
    if (map.size() > MAX_MAP_ENTRIES) {
      throw StorageException.invalid("%s has more than %d entries", field, MAX_MAP_ENTRIES);
    }
    for (Map.Entry<String, String> entry : map.entrySet()) {
      checkLength(entry.getKey(), field + " key", MAX_ID_BYTES * 2);
      checkLength(entry.getValue(), field + " value", MAX_MAP_VALUE_BYTES);
    }
  }

  /** The paging size: negative is invalid, 0 means "the engine's default page". */
  static int maxEntries(int value) {
    if (value < 0) {
      throw StorageException.invalid("max_entries must not be negative, got %d", value);
    }
    return value;
  }

  /** A paging token; the spec answers a token the plugin cannot have issued with ABORTED. */
  static String token(String value) {
    if (value.length() > MAX_ID_BYTES * 2) {
      throw new StorageException(
          StorageException.Reason.ABORTED, "starting_token is not a token this driver issued");
    }
    return value;
  }
}
