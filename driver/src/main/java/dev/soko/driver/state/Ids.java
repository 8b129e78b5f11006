package dev.soko.driver.state;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Optional;

/**
 * Driver-generated IDs. Their alphabet is lowercase letters and digits with a fixed prefix and
 * length, so an ID that passes {@link #isVolumeId}, {@link #isSnapshotId} or {@link #isGroupId} is
 * always safe as a file name: no separators, no dots, nothing a request could use to leave the
 * pool.
 */
public final class Ids {
  public static final String VOLUME_PREFIX = "vol-";
  public static final String SNAPSHOT_PREFIX = "snap-";
  public static final String GROUP_PREFIX = "group-";

  /**
   * A point-in-time copy of a volume that lives only while another node reads it: no record names
   * it, and a file of this shape left by a crash is removed at the next start.
   */
  public static final String READ_COPY_PREFIX = "readcopy-";

  static final int RANDOM_LENGTH = 20;

  private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
  private static final SecureRandom RANDOM = new SecureRandom();

  private Ids() {}

  public static String newVolumeId() {
    return VOLUME_PREFIX + random();
  }

  public static String newSnapshotId() {
    return SNAPSHOT_PREFIX + random();
  }

  /** A volume group snapshot's ID. */
  public static String newGroupId() {
    return GROUP_PREFIX + random();
  }

  /** The ID of a volume's temporary copy for a read by another node. */
  public static String newReadCopyId() {
    return READ_COPY_PREFIX + random();
  }

  public static boolean isReadCopyId(String id) {
    return hasShape(id, READ_COPY_PREFIX);
  }

  public static boolean isVolumeId(String id) {
    return hasShape(id, VOLUME_PREFIX);
  }

  public static boolean isSnapshotId(String id) {
    return hasShape(id, SNAPSHOT_PREFIX);
  }

  /**
   * The volume, snapshot or read copy ID a storage location is named by, for a backend whose
   * locations are named by the ID alone (no suffix); empty for any other name.
   */
  public static Optional<String> ofLocation(Path location) {
    Path name = location.getFileName();
    String id = name == null ? "" : name.toString();
    return isVolumeId(id) || isSnapshotId(id) || isReadCopyId(id)
        ? Optional.of(id)
        : Optional.empty();
  }

  public static boolean isGroupId(String id) {
    return hasShape(id, GROUP_PREFIX);
  }

  /**
   * The prefix and then exactly {@link #RANDOM_LENGTH} characters of the alphabet. A loop, not a
   * regular expression: every call checks IDs several times on its way to a path.
   */
  private static boolean hasShape(String id, String prefix) {
    if (id == null || id.length() != prefix.length() + RANDOM_LENGTH || !id.startsWith(prefix)) {
      return false;
    }
    for (int i = prefix.length(); i < id.length(); i++) {
      char c = id.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
        return false;
      }
    }
    return true;
  }

  /**
   * One draw from the generator per ID (not one per character: each draw takes its lock and runs
   * its hash), mapped to the alphabet without bias: bytes of 252 and above (7 x 36) are skipped.
   */
  private static String random() {
    char[] chars = new char[RANDOM_LENGTH];
    byte[] bytes = new byte[RANDOM_LENGTH * 2];
    int filled = 0;
    while (filled < chars.length) {
      RANDOM.nextBytes(bytes);
      for (int i = 0; i < bytes.length && filled < chars.length; i++) {
        int value = bytes[i] & 0xff;
        if (value < 252) {
          chars[filled++] = ALPHABET[value % ALPHABET.length];
        }
      }
    }
    return new String(chars);
  }
}
