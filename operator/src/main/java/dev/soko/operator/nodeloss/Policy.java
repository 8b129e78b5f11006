package dev.soko.operator.nodeloss;

import dev.soko.api.v1alpha1.NodeLossSpec;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * spec.nodeLoss as the operator uses it. A spec the API server would refuse (only an offline file
 * can carry one) falls back to Retain: deleting is never the result of a value we cannot read.
 *
 * @param deleteAfter null with Retain
 */
record Policy(boolean delete, Duration deleteAfter) {
  static final Policy RETAIN = new Policy(false, null);
  private static final Pattern GROUP = Pattern.compile("([0-9]{1,5})(h|m|s)");
  private static final Duration MIN = parse(NodeLossSpec.MIN_DELETE_AFTER);
  private static final Duration MAX = parse(NodeLossSpec.MAX_DELETE_AFTER);

  static Policy of(NodeLossSpec spec) {
    if (spec == null || spec.getPolicy() != NodeLossSpec.Policy.Delete) {
      return RETAIN;
    }
    String text =
        spec.getDeleteAfter() == null ? NodeLossSpec.DEFAULT_DELETE_AFTER : spec.getDeleteAfter();
    Duration after = parse(text);
    if (after == null || after.compareTo(MIN) < 0 || after.compareTo(MAX) > 0) {
      return RETAIN;
    }
    return new Policy(true, after);
  }

  /** Go-style "1h30m", "90s"; null when the text is not one. */
  static Duration parse(String text) {
    if (text == null || !text.matches(NodeLossSpec.DURATION_PATTERN)) {
      return null;
    }
    Duration total = Duration.ZERO;
    Matcher m = GROUP.matcher(text);
    while (m.find()) {
      long n = Long.parseLong(m.group(1));
      total =
          total.plus(
              switch (m.group(2)) {
                case "h" -> Duration.ofHours(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofSeconds(n);
              });
    }
    return total;
  }

  /** How an event or log line states the policy. */
  String describe() {
    return delete ? "spec.nodeLoss Delete after " + format(deleteAfter) : "spec.nodeLoss Retain";
  }

  static String format(Duration d) {
    return d.toString().substring(2).toLowerCase();
  }
}
