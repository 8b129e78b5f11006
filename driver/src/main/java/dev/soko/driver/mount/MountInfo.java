package dev.soko.driver.mount;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Parses {@code /proc/self/mountinfo} (proc(5)): the kernel's own account of what is mounted where,
 * including bind mounts that {@code mountpoint} or {@code /proc/mounts} cannot tell apart.
 */
public final class MountInfo {
  private MountInfo() {}

  public static List<MountEntry> read(Path file) {
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  public static List<MountEntry> parse(String text) {
    List<MountEntry> entries = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (!line.isBlank()) {
        entries.add(parseLine(line));
      }
    }
    return entries;
  }

  /**
   * A line is: id parent major:minor root mount-point options [optional fields...] - fstype source
   * super-options. The optional fields are variable in number, so the separator is found first.
   */
  static MountEntry parseLine(String line) {
    String[] fields = line.trim().split(" ");
    int separator = Arrays.asList(fields).indexOf("-");
    if (fields.length < 7 || separator < 6 || separator + 2 >= fields.length) {
      throw new IllegalArgumentException("malformed mountinfo line: " + line);
    }
    return new MountEntry(
        Integer.parseInt(fields[0]),
        Integer.parseInt(fields[1]),
        fields[2],
        unescape(fields[3]),
        Path.of(unescape(fields[4])),
        List.of(fields[5].split(",")),
        fields[separator + 1],
        unescape(fields[separator + 2]),
        separator + 3 < fields.length ? List.of(fields[separator + 3].split(",")) : List.of());
  }

  /** The kernel writes space, tab, newline and backslash in paths as 3-digit octal escapes. */
  static String unescape(String field) {
    StringBuilder out = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\' && isOctal(field, i + 1)) {
        out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static boolean isOctal(String s, int from) {
    if (from + 3 > s.length()) {
      return false;
    }
    for (int i = from; i < from + 3; i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '7') {
        return false;
      }
    }
    return true;
  }
}
