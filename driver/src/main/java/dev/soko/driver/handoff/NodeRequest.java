package dev.soko.driver.handoff;

import java.util.Map;

/**
 * One request as the node sees it: its spec at one generation.
 *
 * @param name the object's name
 * @param generation the spec's generation, which the status acknowledges
 * @param volumeId the CSI volume id
 * @param operation what to do, e.g. {@code ModifyVolume}
 * @param parameters the operation's parameters, whole
 */
public record NodeRequest(
    String name,
    long generation,
    String volumeId,
    String operation,
    Map<String, String> parameters) {
  public NodeRequest {
    parameters = Map.copyOf(parameters);
  }
}
