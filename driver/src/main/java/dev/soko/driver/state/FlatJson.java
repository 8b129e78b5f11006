package dev.soko.driver.state;

import dev.soko.driver.json.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The state records' JSON: a flat object of string values, one field a line. {@link Json} writes
 * it; the parser here reads it back, strictly, and rejects anything else (a torn or foreign file
 * must not become a record). Written by hand so the driver takes no JSON dependency.
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
    Parser parser = new Parser(text);
    parser.skipSpace();
    Map<String, String> fields = parser.object();
    parser.skipSpace();
    if (!parser.atEnd()) {
      throw parser.error("trailing characters");
    }
    return fields;
  }

  private static final class Parser {
    private final String text;
    private int pos;

    Parser(String text) {
      this.text = text;
    }

    Map<String, String> object() {
      Map<String, String> fields = new LinkedHashMap<>();
      expect('{');
      skipSpace();
      if (peek() == '}') {
        pos++;
        return fields;
      }
      while (true) {
        skipSpace();
        String key = string();
        skipSpace();
        expect(':');
        skipSpace();
        if (fields.put(key, string()) != null) {
          throw error("duplicate key " + key);
        }
        skipSpace();
        char c = next();
        if (c == '}') {
          return fields;
        }
        if (c != ',') {
          throw error("expected , or }");
        }
      }
    }

    String string() {
      expect('"');
      StringBuilder value = new StringBuilder();
      while (true) {
        char c = next();
        if (c == '"') {
          return value.toString();
        }
        if (c < 0x20) {
          throw error("control character in string");
        }
        if (c != '\\') {
          value.append(c);
          continue;
        }
        char escape = next();
        switch (escape) {
          case '"', '\\', '/' -> value.append(escape);
          case 'n' -> value.append('\n');
          case 'r' -> value.append('\r');
          case 't' -> value.append('\t');
          case 'b' -> value.append('\b');
          case 'f' -> value.append('\f');
          case 'u' -> {
            if (pos + 4 > text.length()) {
              throw error("short unicode escape");
            }
            try {
              value.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
            } catch (NumberFormatException e) {
              throw error("bad unicode escape");
            }
            pos += 4;
          }
          default -> throw error("bad escape \\" + escape);
        }
      }
    }

    void skipSpace() {
      while (!atEnd() && Character.isWhitespace(text.charAt(pos))) {
        pos++;
      }
    }

    boolean atEnd() {
      return pos >= text.length();
    }

    private char peek() {
      if (atEnd()) {
        throw error("unexpected end");
      }
      return text.charAt(pos);
    }

    private char next() {
      char c = peek();
      pos++;
      return c;
    }

    private void expect(char c) {
      if (next() != c) {
        throw error("expected " + c);
      }
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException("invalid record JSON at offset " + pos + ": " + what);
    }
  }
}
