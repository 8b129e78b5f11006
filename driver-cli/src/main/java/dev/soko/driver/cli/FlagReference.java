package dev.soko.driver.cli;

/**
 * The flag tables of docs/driver.md, from the same tables the parser reads: {@code
 * hack/gen-docs.py} runs {@link #main} and writes what it prints between the file's markers, and
 * {@code hack/check-generated.sh} fails when the file says something else.
 */
public final class FlagReference {
  private FlagReference() {}

  public static void main(String[] args) {
    System.out.print(markdown());
  }

  static String markdown() {
    StringBuilder out = new StringBuilder();
    out.append("| flag | meaning |\n|---|---|\n");
    for (Flag flag : Flag.values()) {
      row(out, flag.synopsis(), flag.description());
    }
    out.append("\nA `--pool` SPEC is `")
        .append(PoolField.grammar())
        .append("`, of these fields:\n\n| field | meaning |\n|---|---|\n");
    for (PoolField field : PoolField.values()) {
      row(out, field.synopsis(), field.help);
    }
    return out.toString();
  }

  /** A table row: the term as code, the text with what Markdown would take for a table or tag. */
  private static void row(StringBuilder out, String term, String text) {
    out.append("| `")
        .append(term.replace("|", "\\|"))
        .append("` | ")
        .append(text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;"))
        .append(" |\n");
  }
}
