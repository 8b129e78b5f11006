package dev.soko.operator.support;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.GZIPOutputStream;

/**
 * A gzip'd POSIX ustar archive of regular files, written in one pass. The operator's dependencies
 * have no archive library, and a support bundle needs only files with a name, a size and a time.
 *
 * <p>A name longer than ustar holds (100 bytes, or a 155-byte prefix and a 100-byte rest split at a
 * '/') is shortened: its last part is cut and given a hash of the whole name, so two long names
 * stay two entries. A name given twice gets a numbered suffix rather than a second entry of the
 * same name, which {@code tar -x} would silently let overwrite the first.
 */
public final class TarArchive implements Closeable {
  private static final int BLOCK = 512;
  private static final int NAME = 100;
  private static final int PREFIX = 155;

  private final OutputStream out;
  private final Set<String> names = new LinkedHashSet<>();
  private final long mtime;

  public TarArchive(Path file, Instant time) throws IOException {
    this(Files.newOutputStream(file), time);
  }

  public TarArchive(OutputStream target, Instant time) throws IOException {
    this.out = new GZIPOutputStream(new BufferedOutputStream(target, 1 << 16), 1 << 16);
    this.mtime = time.getEpochSecond();
  }

  /** Adds a regular file; returns the name it was stored under. */
  public String add(String name, byte[] data) throws IOException {
    String stored = unique(fit(name));
    out.write(header(stored, data.length));
    out.write(data);
    int pad = (int) ((BLOCK - data.length % BLOCK) % BLOCK);
    out.write(new byte[pad]);
    return stored;
  }

  /** Adds a regular file with the content of a local file, streamed. */
  public String add(String name, Path file) throws IOException {
    long size = Files.size(file);
    String stored = unique(fit(name));
    out.write(header(stored, size));
    try (InputStream in = Files.newInputStream(file)) {
      if (in.transferTo(out) != size) {
        throw new IOException(file + " changed while it was archived");
      }
    }
    out.write(new byte[(int) ((BLOCK - size % BLOCK) % BLOCK)]);
    return stored;
  }

  public String add(String name, String text) throws IOException {
    return add(name, text.getBytes(StandardCharsets.UTF_8));
  }

  /** The names stored so far, in order. */
  public List<String> names() {
    return List.copyOf(names);
  }

  @Override
  public void close() throws IOException {
    // Two zero blocks end a tar archive.
    out.write(new byte[2 * BLOCK]);
    out.close();
  }

  private String unique(String name) {
    String candidate = name;
    for (int i = 2; !names.add(candidate); i++) {
      candidate = fit(name + "." + i);
    }
    return candidate;
  }

  /** The name itself when ustar can hold it, else a shortened one that keeps it recognisable. */
  static String fit(String name) {
    if (split(name) >= 0) {
      return name;
    }
    int slash = name.lastIndexOf('/');
    String dir = slash < 0 ? "" : name.substring(0, slash + 1);
    String base = name.substring(slash + 1);
    String hash = "~" + sha256(name).substring(0, 12);
    int keep = Math.max(1, NAME - 1 - hash.length() - 8);
    String shortBase = truncate(base, keep) + hash;
    String shortened = dir + shortBase;
    if (split(shortened) >= 0) {
      return shortened;
    }
    return truncate(dir.replace('/', '_'), PREFIX - 1) + "/" + shortBase;
  }

  /** Where to split a name into prefix and name: 0 for no prefix, -1 when it cannot be held. */
  private static int split(String name) {
    byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
    if (bytes.length <= NAME) {
      return 0;
    }
    for (int i = Math.min(PREFIX, bytes.length - 1); i > 0; i--) {
      if (bytes[i] == '/' && bytes.length - i - 1 <= NAME && bytes.length - i - 1 > 0) {
        return i;
      }
    }
    return -1;
  }

  private byte[] header(String name, long size) {
    byte[] h = new byte[BLOCK];
    byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
    int at = split(name);
    if (at > 0) {
      System.arraycopy(bytes, 0, h, 345, at);
      System.arraycopy(bytes, at + 1, h, 0, bytes.length - at - 1);
    } else {
      System.arraycopy(bytes, 0, h, 0, bytes.length);
    }
    octal(h, 100, 8, 0644);
    octal(h, 108, 8, 0);
    octal(h, 116, 8, 0);
    octal(h, 124, 12, size);
    octal(h, 136, 12, mtime);
    h[156] = '0';
    ascii(h, 257, "ustar\0");
    ascii(h, 263, "00");
    // The checksum is computed with its own field as eight spaces.
    for (int i = 148; i < 156; i++) {
      h[i] = ' ';
    }
    long sum = 0;
    for (byte b : h) {
      sum += b & 0xff;
    }
    octal(h, 148, 8, sum);
    return h;
  }

  private static void octal(byte[] h, int offset, int length, long value) {
    String digits = Long.toOctalString(value);
    if (digits.length() > length - 1) {
      throw new IllegalArgumentException("value " + value + " does not fit a ustar field");
    }
    String padded = "0".repeat(length - 1 - digits.length()) + digits;
    ascii(h, offset, padded + "\0");
  }

  private static void ascii(byte[] h, int offset, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, h, offset, b.length);
  }

  private static String truncate(String s, int maxBytes) {
    String t = s;
    while (t.getBytes(StandardCharsets.UTF_8).length > maxBytes) {
      t = t.substring(0, t.length() - 1);
    }
    return t;
  }

  private static String sha256(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
