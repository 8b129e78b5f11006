package dev.soko.driver.cli;

import java.util.ArrayList;
import java.util.List;

/** {@code soko-driver --help}, laid out from the flag and pool-field tables. */
final class Help {
  /** Where descriptions start, and how wide the text may be. */
  private static final int INDENT = 28;

  private static final int WIDTH = 96;

  private Help() {}

  static String text() {
    StringBuilder out = new StringBuilder();
    out.append("Usage: soko-driver [FLAGS]\n")
        .append("Soko node-local CSI driver (CSI spec v1.12.0).\n\n");
    for (Flag flag : Flag.values()) {
      entry(out, "  " + flag.synopsis(), flag.description(), INDENT);
    }
    out.append("\nSPEC of --pool, fields separated by ',':\n");
    StringBuilder line = new StringBuilder("  ");
    for (String part : PoolField.grammar().split("(?=\\[,)")) {
      if (line.length() + part.length() > WIDTH) {
        out.append(line).append('\n');
        line.setLength(0);
        line.append("    ");
      }
      line.append(part);
    }
    out.append(line).append('\n');
    for (PoolField field : PoolField.values()) {
      entry(out, "  " + field.synopsis(), field.help, INDENT);
    }
    out.append(
        """

        A flag's value follows '=' or comes as the next argument; given twice, the last counts
        (but for the repeatable ones).
        SIGTERM stops gracefully: the registration socket goes first (the kubelet deregisters),
        in-flight calls finish, then the engine closes (the JVM then exits with 143).
        Exit codes: 1 start-up failure, 2 bad flags.
        """);
    return out.toString();
  }

  /** A term and its text wrapped beside it, or below it when the term is too wide. */
  private static void entry(StringBuilder out, String term, String text, int indent) {
    List<String> lines = wrap(text, WIDTH - indent);
    String pad = " ".repeat(indent);
    if (term.length() < indent - 1) {
      out.append(term).append(" ".repeat(indent - term.length())).append(lines.get(0)).append('\n');
      lines = lines.subList(1, lines.size());
    } else {
      out.append(term).append('\n');
    }
    for (String line : lines) {
      out.append(pad).append(line).append('\n');
    }
  }

  static List<String> wrap(String text, int width) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    for (String word : text.split(" ")) {
      if (line.length() > 0 && line.length() + 1 + word.length() > width) {
        lines.add(line.toString());
        line.setLength(0);
      }
      line.append(line.length() > 0 ? " " : "").append(word);
    }
    lines.add(line.toString());
    return lines;
  }
}
