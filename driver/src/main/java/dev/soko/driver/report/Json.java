package dev.soko.driver.report;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes JSON from maps, lists, strings, numbers and booleans; a null value leaves its key out.
 * Enough for the few objects the driver sends to the API server, without a JSON library (the
 * driver's idle memory is one of its targets). Maps keep their iteration order.
 */
public final class Json {
  private Json() {}

  /** An ordered map of alternating keys and values, for writing an object in a fixed order. */
  public static Map<String, Object> object(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }

  /** The JSON text of {@code value}; throws for a type it does not know. */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    value(out, value);
    return out.toString();
  }

  private static void value(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      quote(out, s);
    } else if (value instanceof Integer || value instanceof Long || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      object(out, map);
    } else if (value instanceof List<?> list) {
      array(out, list);
    } else {
      throw new IllegalArgumentException("no JSON for " + value.getClass().getSimpleName());
    }
  }

  private static void object(StringBuilder out, Map<?, ?> map) {
    out.append('{');
    boolean first = true;
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      if (entry.getValue() == null) {
        continue;
      }
      if (!first) {
        out.append(',');
      }
      first = false;
      quote(out, String.valueOf(entry.getKey()));
      out.append(':');
      value(out, entry.getValue());
    }
    out.append('}');
  }

  private static void array(StringBuilder out, List<?> list) {
    out.append('[');
    for (int i = 0; i < list.size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      value(out, list.get(i));
    }
    out.append(']');
  }

  /** RFC 8259 string: quote, backslash and control characters escaped; the rest as is (UTF-8). */
  static void quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
