package dev.soko.driver.mount;

/** Bytes and inodes of a mounted filesystem, as statfs(2) reports them. */
public record FsStats(
    long totalBytes, long freeBytes, long availableBytes, long totalInodes, long freeInodes) {

  public long usedBytes() {
    return totalBytes - freeBytes;
  }

  public long usedInodes() {
    return totalInodes - freeInodes;
  }
}
