package dev.soko.driver.volume;

import java.util.List;

/** One page of a listing; {@code nextToken} is empty on the last page. */
public record Page<T>(List<T> items, String nextToken) {}
