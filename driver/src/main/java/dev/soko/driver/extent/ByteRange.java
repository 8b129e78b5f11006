package dev.soko.driver.extent;

/** A run of bytes of a file or volume: {@code length} bytes from {@code offset}, never empty. */
public record ByteRange(long offset, long length) {
  public ByteRange {
    if (offset < 0 || length <= 0) {
      throw new IllegalArgumentException("bad range " + offset + "+" + length);
    }
  }

  public long end() {
    return offset + length;
  }
}
