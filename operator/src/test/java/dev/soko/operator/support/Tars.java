package dev.soko.operator.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/** Reads a gzip'd ustar archive back: entry name (prefix joined) to content, in order. */
final class Tars {
  private Tars() {}

  static Map<String, byte[]> read(Path file) throws IOException {
    byte[] all;
    try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      in.transferTo(b);
      all = b.toByteArray();
    }
    Map<String, byte[]> entries = new LinkedHashMap<>();
    int at = 0;
    while (at + 512 <= all.length) {
      if (all[at] == 0) {
        break;
      }
      String name = field(all, at, 100);
      String prefix = field(all, at + 345, 155);
      if (!prefix.isEmpty()) {
        name = prefix + "/" + name;
      }
      int size = Integer.parseInt(field(all, at + 124, 12).trim(), 8);
      byte[] data = new byte[size];
      System.arraycopy(all, at + 512, data, 0, size);
      if (entries.put(name, data) != null) {
        throw new IllegalStateException("two entries named " + name);
      }
      at += 512 + (size + 511) / 512 * 512;
    }
    return entries;
  }

  private static String field(byte[] b, int offset, int length) {
    int end = offset;
    while (end < offset + length && b[end] != 0) {
      end++;
    }
    return new String(b, offset, end - offset, StandardCharsets.UTF_8);
  }
}
