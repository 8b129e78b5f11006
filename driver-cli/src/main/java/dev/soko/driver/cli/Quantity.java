package dev.soko.driver.cli;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kubernetes resource quantities as byte counts ({@code 10Gi}, {@code 500M}, {@code 1.5Ti}, {@code
 * 1e9}), parsed with exact decimal arithmetic. Like Kubernetes' {@code Quantity.Value()}, a
 * fractional byte count is rounded up.
 */
public final class Quantity {
  private static final Pattern FORM =
      Pattern.compile("(\\+?[0-9]+(?:\\.[0-9]*)?|\\+?\\.[0-9]+)([a-zA-Z]*|[eE][+-]?[0-9]+)");

  private static final Pattern EXPONENT = Pattern.compile("[eE][+-]?[0-9]+");

  private static final Map<String, BigDecimal> SUFFIXES =
      Map.ofEntries(
          Map.entry("", BigDecimal.ONE),
          Map.entry("k", BigDecimal.TEN.pow(3)),
          Map.entry("M", BigDecimal.TEN.pow(6)),
          Map.entry("G", BigDecimal.TEN.pow(9)),
          Map.entry("T", BigDecimal.TEN.pow(12)),
          Map.entry("P", BigDecimal.TEN.pow(15)),
          Map.entry("E", BigDecimal.TEN.pow(18)),
          Map.entry("Ki", binary(10)),
          Map.entry("Mi", binary(20)),
          Map.entry("Gi", binary(30)),
          Map.entry("Ti", binary(40)),
          Map.entry("Pi", binary(50)),
          Map.entry("Ei", binary(60)));

  private Quantity() {}

  /** Parses a non-negative quantity into bytes, or explains in the exception what is wrong. */
  public static long parseBytes(String text) {
    Matcher matcher = FORM.matcher(text.strip());
    if (!matcher.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a quantity (examples: 10Gi, 500M, 1073741824)");
    }
    BigDecimal number = new BigDecimal(matcher.group(1).replace("+", ""));
    String suffix = matcher.group(2);
    BigDecimal multiplier;
    if (EXPONENT.matcher(suffix).matches()) {
      int exponent = Integer.parseInt(suffix.substring(1));
      if (Math.abs(exponent) > 30) {
        throw new IllegalArgumentException("'" + text + "' has an exponent out of range");
      }
      multiplier = BigDecimal.ONE.scaleByPowerOfTen(exponent);
    } else {
      multiplier = SUFFIXES.get(suffix);
      if (multiplier == null) {
        throw new IllegalArgumentException(
            "'"
                + text
                + "' has an unknown suffix '"
                + suffix
                + "' (use Ki, Mi, Gi, Ti, Pi, Ei or k, M, G, T, P, E)");
      }
    }
    BigInteger bytes = number.multiply(multiplier).setScale(0, RoundingMode.CEILING).toBigInteger();
    if (bytes.bitLength() > 63) {
      throw new IllegalArgumentException("'" + text + "' is too large");
    }
    return bytes.longValueExact();
  }

  private static BigDecimal binary(int shift) {
    return new BigDecimal(BigInteger.ONE.shiftLeft(shift));
  }
}
