package dev.soko.driver.json;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The driver's one JSON writer: maps, lists, strings, numbers and booleans; a null value leaves its
 * key out. Enough for the objects the driver sends to the API server and for its state records,
 * without a JSON library (the driver's idle memory is one of its targets). Maps keep their
 * iteration order. A leaf package, so that every layer may write JSON without a cycle.
 */
public final class Json {
  private final StringBuilder out = new StringBuilder();
  private final boolean indented;
  private int depth;

  private Json(boolean indented) {
    this.indented = indented;
  }

  /** An ordered map of alternating keys and values, for writing an object in a fixed order. */
  public static Map<String, Object> object(Object... keysAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return map;
  }

  /** The compact JSON text of {@code value}, for the wire; throws for a type it does not know. */
  public static String write(Object value) {
    return new Json(false).value(value).out.toString();
  }

  /**
   * The JSON text of {@code value} with one member or element a line, indented two spaces a level:
   * for files that a person may read (the state records), where a diff then shows one field.
   */
  public static String writeIndented(Object value) {
    return new Json(true).value(value).out.toString();
  }

  private Json value(Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      quote(s);
    } else if (value instanceof Integer || value instanceof Long || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      object(map);
    } else if (value instanceof List<?> list) {
      array(list);
    } else {
      throw new IllegalArgumentException("no JSON for " + value.getClass().getSimpleName());
    }
    return this;
  }

  private void object(Map<?, ?> map) {
    out.append('{');
    boolean empty = true;
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      if (entry.getValue() == null) {
        continue;
      }
      separate(empty);
      empty = false;
      quote(String.valueOf(entry.getKey()));
      out.append(indented ? ": " : ":");
      nested(entry.getValue());
    }
    close(empty, '}');
  }

  private void array(List<?> list) {
    out.append('[');
    for (int i = 0; i < list.size(); i++) {
      separate(i == 0);
      nested(list.get(i));
    }
    close(list.isEmpty(), ']');
  }

  /** Before a member or element: a comma after the previous one, then its own line. */
  private void separate(boolean first) {
    if (!first) {
      out.append(',');
    }
    newLine(depth + 1);
  }

  private void nested(Object value) {
    depth++;
    value(value);
    depth--;
  }

  /** An empty object or array stays on its line ({@code {}}); a filled one closes on its own. */
  private void close(boolean empty, char bracket) {
    if (!empty) {
      newLine(depth);
    }
    out.append(bracket);
  }

  private void newLine(int level) {
    if (indented) {
      out.append('\n').append("  ".repeat(level));
    }
  }

  private void quote(String s) {
    quote(out, s);
  }

  /**
   * Appends {@code s} as an RFC 8259 string: quote, backslash and control characters escaped, the
   * rest as is (UTF-8). Also the quoting of logfmt values, which follow the same rules.
   */
  public static void quote(StringBuilder out, String s) {
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
          // U+2028 and U+2029 are valid in JSON but end a line in JavaScript and in some log tools.
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
