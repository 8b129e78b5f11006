package dev.soko.driver.iolimit;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A volume's IO limits, from the mutable parameters of its VolumeAttributesClass: operations and
 * bytes per second, for reads and writes apart; 0 is no limit. Parsed strictly: an unknown key, a
 * value that is not a positive whole number (bytes may carry a Kubernetes suffix: {@code 100Mi},
 * {@code 50M}) or one below the minimum is refused with a sentence that names it. {@value
 * #NO_LIMIT} lifts a limit: Kubernetes refuses a VolumeAttributesClass without parameters, and a
 * claim that had a class cannot go back to none, so a class that lifts limits must name them.
 */
public record IoLimits(
    long readIops, long writeIops, long readBytesPerSecond, long writeBytesPerSecond) {
  public static final String READ_IOPS = "readIOPS";
  public static final String WRITE_IOPS = "writeIOPS";
  public static final String READ_BPS = "readBytesPerSecond";
  public static final String WRITE_BPS = "writeBytesPerSecond";
  public static final Set<String> KEYS = Set.of(READ_IOPS, WRITE_IOPS, READ_BPS, WRITE_BPS);
  public static final IoLimits NONE = new IoLimits(0, 0, 0, 0);

  /** The value that sets no limit (as cgroup v2's {@code io.max} writes it). */
  public static final String NO_LIMIT = "max";

  /** Below a page a second, a throttled writer stalls rather than slows. */
  static final long MIN_BYTES_PER_SECOND = 4096;

  static final long MAX_IOPS = 100_000_000L;
  private static final Pattern QUANTITY = Pattern.compile("([0-9]{1,16})(Ki|Mi|Gi|Ti|k|M|G|T)?");

  /** The limits {@code parameters} set; throws IllegalArgumentException saying what is wrong. */
  public static IoLimits parse(Map<String, String> parameters) {
    for (String key : parameters.keySet()) {
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException(
            "unknown IO limit parameter \""
                + key
                + "\": the known ones are "
                + READ_IOPS
                + ", "
                + WRITE_IOPS
                + ", "
                + READ_BPS
                + " and "
                + WRITE_BPS);
      }
    }
    return new IoLimits(
        operations(parameters, READ_IOPS),
        operations(parameters, WRITE_IOPS),
        bytes(parameters, READ_BPS),
        bytes(parameters, WRITE_BPS));
  }

  public boolean none() {
    return equals(NONE);
  }

  /** The parameters these limits come from (the limits set, in plain numbers). */
  public Map<String, String> parameters() {
    Map<String, String> out = new LinkedHashMap<>();
    put(out, READ_IOPS, readIops);
    put(out, WRITE_IOPS, writeIops);
    put(out, READ_BPS, readBytesPerSecond);
    put(out, WRITE_BPS, writeBytesPerSecond);
    return out;
  }

  private static void put(Map<String, String> out, String key, long value) {
    if (value > 0) {
      out.put(key, Long.toString(value));
    }
  }

  private static long operations(Map<String, String> parameters, String key) {
    String text = parameters.get(key);
    if (text == null || text.equals(NO_LIMIT)) {
      return 0;
    }
    if (!text.matches("[0-9]{1,9}")
        || Long.parseLong(text) < 1
        || Long.parseLong(text) > MAX_IOPS) {
      throw new IllegalArgumentException(
          key
              + " must be a whole number of operations from 1 to "
              + MAX_IOPS
              + " or "
              + NO_LIMIT
              + ", not \""
              + text
              + "\"");
    }
    return Long.parseLong(text);
  }

  private static long bytes(Map<String, String> parameters, String key) {
    String text = parameters.get(key);
    if (text == null || text.equals(NO_LIMIT)) {
      return 0;
    }
    Matcher m = QUANTITY.matcher(text);
    long value = m.matches() ? Long.parseLong(m.group(1)) : -1;
    long unit = m.matches() ? unit(m.group(2)) : 1;
    if (value < 0 || value > Long.MAX_VALUE / unit || value * unit < MIN_BYTES_PER_SECOND) {
      throw new IllegalArgumentException(
          key
              + " must be a whole number of bytes of at least "
              + MIN_BYTES_PER_SECOND
              + ", optionally with a suffix (Ki, Mi, Gi, Ti, k, M, G, T), or "
              + NO_LIMIT
              + ", not \""
              + text
              + "\"");
    }
    return value * unit;
  }

  private static long unit(String suffix) {
    if (suffix == null) {
      return 1;
    }
    return switch (suffix) {
      case "Ki" -> 1L << 10;
      case "Mi" -> 1L << 20;
      case "Gi" -> 1L << 30;
      case "Ti" -> 1L << 40;
      case "k" -> 1_000L;
      case "M" -> 1_000_000L;
      case "G" -> 1_000_000_000L;
      default -> 1_000_000_000_000L;
    };
  }
}
