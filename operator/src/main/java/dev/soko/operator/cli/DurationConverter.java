package dev.soko.operator.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Durations as Kubernetes tools write them: a positive number and one unit, s, m or h. */
final class DurationConverter implements ITypeConverter<Duration> {
  private static final Pattern FORM = Pattern.compile("([0-9]{1,6})(s|m|h)");

  @Override
  public Duration convert(String value) {
    Matcher m = FORM.matcher(value.strip());
    if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
      throw new TypeConversionException("'" + value + "' is not a duration such as 90s, 3m or 1h");
    }
    long amount = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      default -> Duration.ofHours(amount);
    };
  }
}
