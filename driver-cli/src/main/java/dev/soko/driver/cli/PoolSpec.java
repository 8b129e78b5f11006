package dev.soko.driver.cli;

import dev.soko.driver.config.PoolConfig;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.regex.Pattern;

/**
 * Parses one {@code --pool} value, fields as {@link PoolField} lists them. A btrfs-subvolume pool's
 * volumes are btrfs subvolumes, so its only filesystem is btrfs: {@code fs} may be left out or say
 * {@code btrfs}. One {@code nodeSelector:} field per label: a label key holds '/' and '.' but never
 * ',', ':' or '=', and a label value none of those, so the first '=' ends the key.
 */
public final class PoolSpec {
  /** Pool names end up in StorageClass parameters and metrics labels: keep them DNS-label-like. */
  static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /** Kubernetes' label key: an optional DNS-subdomain prefix and '/', then a name. */
  static final Pattern LABEL_KEY =
      Pattern.compile(
          "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
              + "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");

  /** Kubernetes' label value: empty, or up to 63 of these, alphanumeric at both ends. */
  static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

  private PoolSpec() {}

  public static PoolConfig parse(String spec) {
    Map<PoolField, String> fields = new EnumMap<>(PoolField.class);
    Map<String, String> selector = new LinkedHashMap<>();
    for (String part : spec.split(",", -1)) {
      int eq = part.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("'" + part + "' is not key=value");
      }
      String key = part.substring(0, eq).strip();
      String value = part.substring(eq + 1).strip();
      PoolField field =
          PoolField.of(key)
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "unknown key '" + key + "' (known: " + PoolField.keys() + ")"));
      if (field == PoolField.NODE_SELECTOR) {
        label(selector, key.substring(PoolField.SELECTOR_PREFIX.length()), value);
      } else if (fields.put(field, value) != null) {
        throw new IllegalArgumentException("key '" + key + "' given twice");
      }
    }
    String name = fields.get(PoolField.NAME);
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "name is required and must be lower-case letters, digits and '-', at most 63 characters");
    }
    String pathText = fields.get(PoolField.PATH);
    if (pathText == null || !pathText.startsWith("/")) {
      throw new IllegalArgumentException("path is required and must be absolute");
    }
    String capacityText = fields.get(PoolField.CAPACITY);
    long capacity = capacityText == null ? 0 : Quantity.parseBytes(capacityText);
    String ratioText = fields.get(PoolField.OVERPROVISION);
    double ratio = ratioText == null ? 1.0 : ratio(ratioText);
    PoolConfig.Backend backend = backend(fields.get(PoolField.BACKEND));
    String fs = fields.get(PoolField.FS);
    return new PoolConfig(
        name,
        Path.of(pathText).normalize(),
        capacity,
        ratio,
        backend.formatsVolumes() ? chosenFsTypes(backend, fs) : ownFsTypes(backend, fs),
        flag(fields, PoolField.REQUIRE_MOUNT_POINT),
        flag(fields, PoolField.ALLOW_ROOT_FILESYSTEM),
        selector,
        backend);
  }

  private static PoolConfig.Backend backend(String text) {
    if (text == null) {
      return PoolConfig.Backend.IMAGE_FILE;
    }
    return PoolConfig.Backend.ofFlag(text)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "backend '"
                        + text
                        + "' is unknown (known: "
                        + Arrays.stream(PoolConfig.Backend.values())
                            .map(PoolConfig.Backend::flagName)
                            .toList()
                        + ")"));
  }

  /** A backend whose volumes are of the pool's own filesystem: fs may only repeat that. */
  private static Set<String> ownFsTypes(PoolConfig.Backend backend, String text) {
    Set<String> own = backend.fsTypes();
    if (text != null && !text.equals(String.join(":", own))) {
      throw new IllegalArgumentException(
          "fs="
              + text
              + " is not possible with backend="
              + backend.flagName()
              + ": its volumes are "
              + String.join(", ", own)
              + " subvolumes of the pool's own filesystem (leave fs out or say fs="
              + String.join(":", own)
              + ")");
    }
    return own;
  }

  private static void label(Map<String, String> selector, String key, String value) {
    if (key.length() > 317 || !LABEL_KEY.matcher(key).matches()) {
      throw new IllegalArgumentException("nodeSelector: '" + key + "' is not a label key");
    }
    if (!LABEL_VALUE.matcher(value).matches()) {
      throw new IllegalArgumentException(
          "nodeSelector: '" + value + "' (of " + key + ") is not a label value");
    }
    if (selector.put(key, value) != null) {
      throw new IllegalArgumentException("nodeSelector label '" + key + "' given twice");
    }
  }

  private static boolean flag(Map<PoolField, String> fields, PoolField field) {
    String text = fields.getOrDefault(field, "false");
    return switch (text) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(field.key + " must be true or false");
    };
  }

  private static double ratio(String text) {
    double ratio;
    try {
      ratio = Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("overprovision '" + text + "' is not a number");
    }
    if (!(ratio >= 1.0) || Double.isInfinite(ratio)) {
      throw new IllegalArgumentException("overprovision must be a finite number >= 1.0");
    }
    return ratio;
  }

  /** A backend that formats its volumes: fs picks some of its filesystems, all when left out. */
  private static Set<String> chosenFsTypes(PoolConfig.Backend backend, String text) {
    Set<String> offered = backend.fsTypes();
    if (text == null) {
      return offered;
    }
    Set<String> types = new LinkedHashSet<>();
    for (String type : text.split(":", -1)) {
      if (!offered.contains(type) || !types.add(type)) {
        throw new IllegalArgumentException(
            "fs must be a ':'-separated list of distinct types from "
                + offered
                + PoolConfig.Backend.serving(type)
                    .filter(other -> other != backend)
                    .map(other -> " (" + type + " volumes need backend=" + other.flagName() + ")")
                    .orElse(""));
      }
    }
    return Collections.unmodifiableSet(types);
  }

  /**
   * The {@code --pool} value that {@link #parse} reads back as {@code pool}: fields at their
   * default are left out, so an image-file pool's value names no backend (as the driver's flags
   * always were).
   */
  public static String format(PoolConfig pool) {
    StringJoiner text = new StringJoiner(",");
    text.add(field(PoolField.NAME, pool.name()));
    text.add(field(PoolField.PATH, pool.path().toString()));
    if (pool.capacityBytes() != 0) {
      text.add(field(PoolField.CAPACITY, Long.toString(pool.capacityBytes())));
    }
    if (pool.overprovisionRatio() != 1.0) {
      text.add(field(PoolField.OVERPROVISION, Double.toString(pool.overprovisionRatio())));
    }
    if (!List.copyOf(pool.fsTypes()).equals(List.copyOf(pool.backend().fsTypes()))) {
      text.add(field(PoolField.FS, String.join(":", pool.fsTypes())));
    }
    if (pool.requireMountPoint()) {
      text.add(field(PoolField.REQUIRE_MOUNT_POINT, "true"));
    }
    if (pool.allowRootFilesystem()) {
      text.add(field(PoolField.ALLOW_ROOT_FILESYSTEM, "true"));
    }
    if (pool.backend() != PoolConfig.Backend.IMAGE_FILE) {
      text.add(field(PoolField.BACKEND, pool.backend().flagName()));
    }
    pool.nodeSelector().entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            label -> text.add(PoolField.SELECTOR_PREFIX + label.getKey() + "=" + label.getValue()));
    return text.toString();
  }

  private static String field(PoolField field, String value) {
    return field.key + "=" + value;
  }
}
