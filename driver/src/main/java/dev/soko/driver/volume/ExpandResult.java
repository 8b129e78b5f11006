package dev.soko.driver.volume;

/** ControllerExpandVolume's answer. */
public record ExpandResult(long capacityBytes, boolean nodeExpansionRequired) {}
