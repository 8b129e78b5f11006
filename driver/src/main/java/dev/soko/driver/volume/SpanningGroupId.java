package dev.soko.driver.volume;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The ID of a group snapshot whose members are on several nodes: the ID every node's part is kept
 * under, {@value NodeGroupId#AT}, and the group's nodes, sorted, joined by {@value #JOIN}. Get and
 * Delete name nothing but the ID, and the controller keeps no state, so the ID names every node
 * that holds a part; each node finds its own part under the shared ID. A node name holds neither
 * separator, so this form is never taken for a {@link NodeGroupId}, whose single node it would
 * otherwise parse.
 */
public record SpanningGroupId(String partId, List<String> nodes) {
  public static final String JOIN = "+";

  /** CSI's limit on an ID, which this form must keep: the nodes' names share what is left. */
  public static final int MAX_BYTES = 128;

  private static final Pattern NODE_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?");

  public SpanningGroupId {
    nodes = nodes.stream().sorted().distinct().toList();
  }

  /** The parts of {@code id}, or empty when it is not in this form (two nodes or more). */
  public static Optional<SpanningGroupId> tryParse(String id) {
    int at = id.indexOf(NodeGroupId.AT);
    if (at <= 0 || at != id.lastIndexOf(NodeGroupId.AT)) {
      return Optional.empty();
    }
    List<String> nodes = List.of(id.substring(at + 1).split(Pattern.quote(JOIN), -1));
    if (nodes.size() < 2 || !nodes.stream().allMatch(n -> NODE_NAME.matcher(n).matches())) {
      return Optional.empty();
    }
    return Optional.of(new SpanningGroupId(id.substring(0, at), nodes));
  }

  public String id() {
    return partId + NodeGroupId.AT + String.join(JOIN, nodes);
  }

  /**
   * INVALID_ARGUMENT when the ID would be longer than CSI allows: the nodes' names are too long
   * together to be named in it.
   */
  public SpanningGroupId checkLength() {
    if (id().length() > MAX_BYTES) {
      throw StorageException.invalid(
          "a group snapshot across nodes %s cannot be named in a group snapshot ID of at most %d"
              + " bytes (its ID names every node that holds a part); take a group per node",
          String.join(", ", nodes), MAX_BYTES);
    }
    return this;
  }
}
