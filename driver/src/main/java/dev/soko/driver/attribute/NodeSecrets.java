package dev.soko.driver.attribute;

import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The secrets a NodeStageVolume carries (the kubelet reads them from the Secret its StorageClass
 * names in {@code csi.storage.k8s.io/node-stage-secret-name}). Shown by field names only: no value
 * reaches a log line, a message or a record through this type's {@code toString}.
 */
public final class NodeSecrets {
  private static final NodeSecrets NONE = new NodeSecrets(Map.of());

  private final Map<String, String> values;

  private NodeSecrets(Map<String, String> values) {
    this.values = Map.copyOf(values);
  }

  public static NodeSecrets of(Map<String, String> values) {
    return values == null || values.isEmpty() ? NONE : new NodeSecrets(values);
  }

  public static NodeSecrets none() {
    return NONE;
  }

  /** The value of {@code field}, when the Secret has it. */
  public Optional<String> field(String field) {
    return Optional.ofNullable(values.get(field));
  }

  public boolean isEmpty() {
    return values.isEmpty();
  }

  @Override
  public String toString() {
    return "NodeSecrets" + new TreeSet<>(values.keySet());
  }
}
