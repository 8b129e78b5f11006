package dev.soko.driver.sys;

/**
 * What statvfs(3) reports; block counts are in units of {@code fragmentSize} (f_frsize), as {@code
 * stat -f} prints them.
 */
public record StatVfs(
    long fragmentSize,
    long blocks,
    long freeBlocks,
    long availableBlocks,
    long files,
    long freeFiles) {}
