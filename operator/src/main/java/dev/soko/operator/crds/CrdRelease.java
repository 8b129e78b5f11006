package dev.soko.operator.crds;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Soko release that generated a CRD, read from its {@value #ANNOTATION} annotation (written by
 * the crd module's build), ordered as semantic versions: a pre-release such as {@code
 * 0.3.0-SNAPSHOT} comes before {@code 0.3.0} and after {@code 0.2.0}.
 */
public record CrdRelease(int major, int minor, int patch, String preRelease)
    implements Comparable<CrdRelease> {
  public static final String ANNOTATION = "soko.dev/release";

  private static final Pattern VERSION =
      Pattern.compile("(\\d{1,9})\\.(\\d{1,9})\\.(\\d{1,9})(?:-([0-9A-Za-z.-]+))?");

  /** The release in {@code text}; empty when it is not a version this class can order. */
  public static Optional<CrdRelease> parse(String text) {
    Matcher m = VERSION.matcher(text == null ? "" : text);
    if (!m.matches()) {
      return Optional.empty();
    }
    return Optional.of(
        new CrdRelease(
            Integer.parseInt(m.group(1)),
            Integer.parseInt(m.group(2)),
            Integer.parseInt(m.group(3)),
            m.group(4) == null ? "" : m.group(4)));
  }

  @Override
  public int compareTo(CrdRelease other) {
    int core =
        major != other.major
            ? Integer.compare(major, other.major)
            : minor != other.minor
                ? Integer.compare(minor, other.minor)
                : Integer.compare(patch, other.patch);
    if (core != 0) {
      return core;
    }
    if (preRelease.isEmpty() || other.preRelease.isEmpty()) {
      // A release is newer than any of its pre-releases.
      return Boolean.compare(preRelease.isEmpty(), other.preRelease.isEmpty());
    }
    return comparePreRelease(preRelease, other.preRelease);
  }

  /** Semantic Versioning's rule: identifier by identifier, numbers numerically, before text. */
  private static int comparePreRelease(String a, String b) {
    String[] left = a.split("\\.");
    String[] right = b.split("\\.");
    for (int i = 0; i < Math.min(left.length, right.length); i++) {
      boolean leftNumber = left[i].matches("\\d{1,9}");
      boolean rightNumber = right[i].matches("\\d{1,9}");
      int order =
          leftNumber && rightNumber
              ? Integer.compare(Integer.parseInt(left[i]), Integer.parseInt(right[i]))
              : leftNumber != rightNumber ? (leftNumber ? -1 : 1) : left[i].compareTo(right[i]);
      if (order != 0) {
        return order;
      }
    }
    return Integer.compare(left.length, right.length);
  }

  @Override
  public String toString() {
    return major + "." + minor + "." + patch + (preRelease.isEmpty() ? "" : "-" + preRelease);
  }
}
