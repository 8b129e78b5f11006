package dev.soko.operator.dist;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What the repository's Markdown files point at, read the way GitHub renders them: inline links and
 * images, reference definitions and HTML {@code href}/{@code src}, outside fenced code blocks and
 * HTML comments. Code spans that hold a relative path ({@code `../x`}) are kept apart: they are not
 * links, but one that leaves the repository points a reader at something the repository lacks.
 */
final class MarkdownLinks {
  /**
   * @param codeSpan the target is the text of a code span, not a link
   */
  record Link(Path file, int line, String target, boolean codeSpan) {
    String where(Path root) {
      return root.relativize(file) + ":" + line + ": " + target;
    }

    /** A web address or e-mail: nothing in the repository to resolve. */
    boolean external() {
      return SCHEME.matcher(target).lookingAt() && !target.startsWith("file:");
    }
  }

  private static final Pattern SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*:");
  private static final Pattern FENCE = Pattern.compile("^ {0,3}(```|~~~)");
  private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
  private static final Pattern INLINE =
      Pattern.compile("!?\\[[^\\]]*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
  private static final Pattern REFERENCE = Pattern.compile("^ {0,3}\\[[^\\]]+\\]:\\s*<?([^\\s>]+)");
  private static final Pattern HTML = Pattern.compile("(?:href|src)=\"([^\"]+)\"");
  private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern COMMENT = Pattern.compile("<!--.*?-->");

  private MarkdownLinks() {}

  /** Every Markdown file below {@code root}, build output and Git's own directory left out. */
  static List<Path> files(Path root) {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(p -> p.toString().endsWith(".md"))
          .filter(p -> !root.relativize(p).toString().matches("(.*/)?(target|\\.git)/.*"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<Link> links(Path file) {
    List<Link> links = new ArrayList<>();
    boolean fenced = false;
    List<String> lines = read(file);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (FENCE.matcher(line).find()) {
        fenced = !fenced;
        continue;
      }
      if (fenced) {
        continue;
      }
      String text = COMMENT.matcher(line).replaceAll("");
      Matcher code = CODE_SPAN.matcher(text);
      StringBuilder prose = new StringBuilder();
      while (code.find()) {
        String span = code.group(2).strip();
        if (span.startsWith("../") || span.startsWith("./")) {
          links.add(new Link(file, i + 1, span, true));
        }
        code.appendReplacement(prose, "");
      }
      code.appendTail(prose);
      for (Pattern pattern : List.of(INLINE, REFERENCE, HTML)) {
        Matcher m = pattern.matcher(prose);
        while (m.find()) {
          links.add(new Link(file, i + 1, m.group(1), false));
        }
      }
    }
    return links;
  }

  /**
   * The anchors GitHub makes of a file's headings: lower case, punctuation dropped, '-' for ' '.
   */
  static Set<String> anchors(Path file) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean fenced = false;
    for (String line : read(file)) {
      if (FENCE.matcher(line).find()) {
        fenced = !fenced;
        continue;
      }
      Matcher m = HEADING.matcher(line);
      if (fenced || !m.matches()) {
        continue;
      }
      String slug =
          m.group(1)
              .toLowerCase(Locale.ROOT)
              .replaceAll("[^\\p{L}\\p{N} _-]", "")
              .replace(' ', '-');
      int count = seen.merge(slug, 1, Integer::sum);
      anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
    }
    return anchors;
  }

  private static List<String> read(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
