package dev.soko.driver.state;

import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The state records' JSON: a flat object of string values, one field a line. {@link Json} writes it
 * and {@link JsonParser} reads it back, strictly; anything but such an object is rejected (a torn
 * or foreign file must not become a record).
 */
public final class FlatJson {
  private FlatJson() {}

  public static String write(Map<String, String> fields) {
    return Json.writeIndented(fields) + "\n";
  }

  /**
   * Parses a flat object of string values.
   *
   * @throws IllegalArgumentException when the text is not exactly such an object
   */
  public static Map<String, String> parse(String text) {
    Object value;
    try {
      value = JsonParser.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid record JSON: " + e.getMessage(), e);
    }
    if (!(value instanceof Map<?, ?> object)) {
      throw new IllegalArgumentException("invalid record JSON: not an object");
    }
    Map<String, String> fields = new LinkedHashMap<>();
    for (Map.Entry<?, ?> field : object.entrySet()) {
      if (!(field.getValue() instanceof String string)) {
        throw new IllegalArgumentException(
            "invalid record JSON: field " + field.getKey() + " is not a string");
      }
      fields.put((String) field.getKey(), string);
    }
    return fields;
  }
}
