package dev.soko.driver.state;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * Driver-generated IDs. Their alphabet is lowercase letters and digits with a fixed prefix and
 * length, so an ID that passes {@link #isVolumeId}/{@link #isSnapshotId} is always safe as a file
 * name: no separators, no dots, nothing a request could use to leave the pool.
 */
public final class Ids {
  public static final String VOLUME_PREFIX = "vol-";
  public static final String SNAPSHOT_PREFIX = "snap-";
  static final int RANDOM_LENGTH = 20;

  private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
  private static final Pattern VOLUME = Pattern.compile("vol-[a-z0-9]{" + RANDOM_LENGTH + "}");
  private static final Pattern SNAPSHOT = Pattern.compile("snap-[a-z0-9]{" + RANDOM_LENGTH + "}");
  private static final SecureRandom RANDOM = new SecureRandom();

  private Ids() {}

  public static String newVolumeId() {
    return VOLUME_PREFIX + random();
  }

  public static String newSnapshotId() {
    return SNAPSHOT_PREFIX + random();
  }

  public static boolean isVolumeId(String id) {
    return id != null && VOLUME.matcher(id).matches();
  }

  public static boolean isSnapshotId(String id) {
    return id != null && SNAPSHOT.matcher(id).matches();
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
