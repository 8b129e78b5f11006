package dev.soko.driver.volume;

import java.nio.file.Path;

/**
 * A point-in-time copy of a volume, made for one read by another node: its file (opened read-only
 * by the reader) and the ranges of it that hold data. Closing {@link #blocks()} removes the copy
 * and gives its space back to the pool, so the stream that reads it removes it however it ends.
 */
public record ReadCopy(VolumeImage volume, Path path, BlockStream blocks) {}
