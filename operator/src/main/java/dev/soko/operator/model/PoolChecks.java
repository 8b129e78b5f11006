package dev.soko.operator.model;

import dev.soko.api.v1alpha1.PoolSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The pool checks of the CRD's rules, repeated for {@code render} and an older CRD, plus the one it
 * cannot make: a capacity beyond the driver's 64-bit byte count. The node selector's label syntax
 * is repeated too: a ',' or ':' in it would change the meaning of the driver's --pool flag.
 */
final class PoolChecks {
  private static final BigDecimal MAX_BYTES = BigDecimal.valueOf(Long.MAX_VALUE);
  private static final Pattern LABEL_KEY =
      Pattern.compile(
          "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
              + "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

  private PoolChecks() {}

  static void check(List<PoolSpec> pools, List<String> problems) {
    Set<String> paths = new HashSet<>();
    for (PoolSpec p : pools) {
      if (p.getPath() != null && !paths.add(p.getPath())) {
        problems.add("spec.pools[].path must be unique: '" + p.getPath() + "' appears twice");
      }
      if (p.getCapacity() != null) {
        capacity(p, problems);
      }
      if (p.getNodeSelector() != null) {
        nodeSelector(p, problems);
      }
    }
  }

  private static void nodeSelector(PoolSpec p, List<String> problems) {
    for (Map.Entry<String, String> label : p.getNodeSelector().entrySet()) {
      String key = label.getKey();
      String value = label.getValue() == null ? "" : label.getValue();
      if (key.length() > 317 || !LABEL_KEY.matcher(key).matches()) {
        problems.add(
            "spec.pools[].nodeSelector of pool '"
                + p.getName()
                + "': '"
                + key
                + "' is no label key");
      } else if (!LABEL_VALUE.matcher(value).matches()) {
        problems.add(
            "spec.pools[].nodeSelector of pool '"
                + p.getName()
                + "': '"
                + value
                + "' is no label value");
      }
    }
  }

  private static void capacity(PoolSpec p, List<String> problems) {
    BigDecimal bytes;
    try {
      bytes = Quantity.parse(p.getCapacity()).getNumericalAmount();
    } catch (IllegalArgumentException e) {
      problems.add("spec.pools[].capacity of pool '" + p.getName() + "' is not a quantity");
      return;
    }
    if (bytes.signum() <= 0) {
      // The driver reads 0 as "all the free space", the opposite of what 0 says.
      problems.add(
          "spec.pools[].capacity of pool '"
              + p.getName()
              + "' must be greater than 0; leave it unset for all the free space");
    } else if (bytes.compareTo(MAX_BYTES) > 0) {
      problems.add(
          "spec.pools[].capacity of pool '" + p.getName() + "' exceeds 8Ei, the driver's limit");
    }
  }
}
