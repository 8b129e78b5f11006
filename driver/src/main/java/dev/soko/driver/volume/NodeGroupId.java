package dev.soko.driver.volume;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A group snapshot ID as a cluster knows it: the ID the node's records keep, {@value #AT} and the
 * node's name. Groups are taken through the controller, which must find the node in the ID alone
 * (Get and Delete name nothing else); the node shows its groups in the same form, since the
 * snapshot controller matches a member's group by the ID the node lists with it. Node names cannot
 * hold {@value #AT}, and the node's own IDs do not either.
 */
public record NodeGroupId(String nodeId, String node) {
  public static final String AT = "@";

  /** A node's name as Kubernetes allows it, no longer than a label value. */
  private static final Pattern NODE_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?");

  /** The parts of {@code id}, or empty when it is not in this form. */
  public static Optional<NodeGroupId> tryParse(String id) {
    int at = id.lastIndexOf(AT);
    if (at <= 0 || !NODE_NAME.matcher(id.substring(at + 1)).matches()) {
      return Optional.empty();
    }
    return Optional.of(new NodeGroupId(id.substring(0, at), id.substring(at + 1)));
  }

  /** The parts of {@code id}; NOT_FOUND when it is not in this form, since no group has it. */
  public static NodeGroupId parse(String id) {
    return tryParse(id)
        .orElseThrow(
            () ->
                StorageException.notFound(
                    "group snapshot %s does not exist: this driver's group snapshot IDs end in"
                        + " %s and the node's name",
                    id, AT));
  }

  public String id() {
    return nodeId + AT + node;
  }
}
