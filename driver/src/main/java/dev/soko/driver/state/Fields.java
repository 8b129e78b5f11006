package dev.soko.driver.state;

import java.util.Map;

/** Helpers for reading stored record fields. */
final class Fields {
  private Fields() {}

  static String require(Map<String, String> fields, String key) {
    String value = fields.get(key);
    if (value == null) {
      throw new IllegalArgumentException("record lacks field " + key);
    }
    return value;
  }
}
