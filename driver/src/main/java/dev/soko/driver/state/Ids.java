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

  private static String random() {
    char[] chars = new char[RANDOM_LENGTH];
    for (int i = 0; i < chars.length; i++) {
      chars[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
    }
    return new String(chars);
  }
}
