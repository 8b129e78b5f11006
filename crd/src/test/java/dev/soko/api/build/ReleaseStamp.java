package dev.soko.api.build;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes the release that generated a CRD into its {@code metadata.annotations} ({@value
 * #ANNOTATION}), so that an operator started with {@code --upgrade-crds} can tell whether the CRD a
 * cluster holds is older than the one it was built with. fabric8's generator writes no annotations;
 * like {@link PrinterColumnOrder}, this edits the YAML as text and leaves the rest byte for byte.
 *
 * <pre>ReleaseStamp VERSION CRD_FILE...</pre>
 */
public final class ReleaseStamp {
  /** Kept equal to the operator's {@code CrdRelease.ANNOTATION}, which reads it. */
  public static final String ANNOTATION = "soko.dev/release";

  private static final Pattern METADATA = Pattern.compile("(?m)^metadata:\n");
  private static final Pattern STAMP =
      Pattern.compile("(?m)^  annotations:\n    " + Pattern.quote(ANNOTATION) + ": \"[^\"]*\"\n");

  private ReleaseStamp() {}

  public static void main(String[] args) throws IOException {
    String version = args[0];
    for (String arg : Arrays.asList(args).subList(1, args.length)) {
      Path file = Path.of(arg);
      String yaml = Files.readString(file, StandardCharsets.UTF_8);
      String stamped = stamp(yaml, version);
      if (!stamped.equals(yaml)) {
        Files.writeString(file, stamped, StandardCharsets.UTF_8);
      }
    }
  }

  /** The CRD with {@code version} as its only annotation; a stamp already there is replaced. */
  static String stamp(String yaml, String version) {
    if (!version.matches("[0-9A-Za-z.+-]+")) {
      throw new IllegalArgumentException("not a release version: " + version);
    }
    String unstamped = STAMP.matcher(yaml).replaceFirst("");
    if (unstamped.contains("\n  annotations:")) {
      throw new IllegalArgumentException("the CRD has annotations of its own; stamp them by hand");
    }
    Matcher metadata = METADATA.matcher(unstamped);
    if (!metadata.find()) {
      throw new IllegalArgumentException("no top-level metadata in the CRD");
    }
    String annotation = "metadata:\n  annotations:\n    " + ANNOTATION + ": \"" + version + "\"\n";
    return unstamped.substring(0, metadata.start())
        + annotation
        + unstamped.substring(metadata.end());
  }
}
