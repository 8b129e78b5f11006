package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.csi.ClusterControllerService;
import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's ControllerExpandVolume in a cluster: hands the growth to the volume's node
 * through a NodeRequest (one per volume, its spec the sizes asked for) and answers what the node
 * answers. The request is the state: a repeated or concurrent call with the same sizes writes the
 * same spec, keeps its generation and gets the same answer; a restarted controller finds the
 * request and its status where the last one left them; a restarted node finds the request not yet
 * answered and carries it out (the growth is idempotent).
 *
 * <p>Only the node's refusal fails the call (a shrink, a pool without the room: OUT_OF_RANGE, with
 * the claim usable at its old size; a volume it does not hold). The request is then deleted, so
 * that the resizer's retry is judged afresh (the room may have been freed) rather than answered
 * from the old status. Wherever the node cannot finish the growth, the answer is the kubelet's path
 * ({@link Optional#empty}): a node whose driver does not answer in time (the request stays, and the
 * node grows the volume when it is back; NodeExpandVolume is idempotent), a node whose driver does
 * not know the operation (an older version), a volume no PersistentVolume names a node for. A
 * volume whose node no longer exists is UNAVAILABLE, retried by the resizer until the node is back:
 * the kubelet's path would wait for it too, without saying why.
 */
public final class RemoteExpand implements ClusterControllerService.VolumeExpander {
  private static final Logger LOG = LoggerFactory.getLogger(RemoteExpand.class);
  public static final String OPERATION = "ExpandVolume";
  static final String REQUIRED_BYTES = "requiredBytes";
  static final String LIMIT_BYTES = "limitBytes";
  static final String EXPANSION = "expansion";

  /** Whether a node is gone: its Node object does not exist (false when that cannot be told). */
  @FunctionalInterface
  public interface Nodes {
    boolean gone(String node) throws InterruptedException;

    /**
     * A GET of the Node: gone only on 404. Without the right to read Nodes (403), or when the API
     * server cannot be asked, a node is never taken for gone, and its volumes take the kubelet's
     * path.
     */
    static Nodes of(KubeApi api) {
      return node -> {
        try {
          return api.get("/api/v1/nodes/" + encode(node), 1 << 20).status() == 404;
        } catch (IOException e) {
          return false;
        }
      };
    }
  }

  private final VolumeOwners owners;
  private final NodeRequestClient client;
  private final Nodes nodes;

  public RemoteExpand(VolumeOwners owners, NodeRequestClient client, Nodes nodes) {
    this.owners = owners;
    this.client = client;
    this.nodes = nodes;
  }

  @Override
  public Optional<ExpandResult> expand(String volumeId, long requiredBytes, long limitBytes) {
    try {
      return ask(volumeId, requiredBytes, limitBytes);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageException(StorageException.Reason.UNAVAILABLE, "interrupted");
    }
  }

  private Optional<ExpandResult> ask(String volumeId, long requiredBytes, long limitBytes)
      throws InterruptedException {
    Optional<VolumeOwners.Owner> owner = owners.of(volumeId);
    if (owner.isEmpty()) {
      if (!owners.synced()) {
        throw new StorageException(
            StorageException.Reason.UNAVAILABLE, "the PersistentVolumes are not read yet");
      }
      LOG.info("no PersistentVolume names the node of volume {}; the kubelet grows it", volumeId);
      return Optional.empty();
    }
    NodeRequestClient.Answer answer =
        client.request(
            owner.get(),
            volumeId,
            OPERATION,
            Map.of(
                REQUIRED_BYTES, Long.toString(requiredBytes),
                LIMIT_BYTES, Long.toString(limitBytes)));
    return switch (answer.kind()) {
      case APPLIED -> applied(volumeId, answer.status());
      case REFUSED -> refused(volumeId, answer);
      case PENDING -> pending(volumeId, owner.get().node(), answer.message());
    };
  }

  private static Optional<ExpandResult> applied(String volumeId, Object status) {
    Optional<ExpandResult> result = parse(JsonParser.at(status, EXPANSION));
    if (result.isEmpty()) {
      LOG.warn("the node's answer for volume {} has no expansion; the kubelet grows it", volumeId);
    }
    return result;
  }

  private Optional<ExpandResult> refused(String volumeId, NodeRequestClient.Answer answer)
      throws InterruptedException {
    client.forget(OPERATION, volumeId);
    String reason = text(JsonParser.at(answer.status(), NodeRequests.REASON));
    if (reason.isEmpty()) {
      // Every refusal of a growth names its code; one without is a driver that does not know it.
      LOG.info("{}; the kubelet grows volume {}", answer.message(), volumeId);
      return Optional.empty();
    }
    StorageException.Reason code;
    try {
      code = StorageException.Reason.valueOf(reason);
    } catch (IllegalArgumentException e) {
      code = StorageException.Reason.INVALID_ARGUMENT;
    }
    throw new StorageException(code, answer.message());
  }

  private Optional<ExpandResult> pending(String volumeId, String node, String why)
      throws InterruptedException {
    if (nodes.gone(node)) {
      throw new StorageException(
          StorageException.Reason.UNAVAILABLE,
          String.format(
              "volume %s is on node %s, which does not exist now; it grows once the node is back",
              volumeId, node));
    }
    LOG.info("{}; the kubelet grows volume {}", why, volumeId);
    return Optional.empty();
  }

  /** The status field a node answers a growth with. */
  static Map<String, Object> answer(ExpandResult result) {
    return Json.object(
        "capacityBytes",
        result.capacityBytes(),
        "nodeExpansionRequired",
        result.nodeExpansionRequired());
  }

  static Optional<ExpandResult> parse(Object expansion) {
    if (JsonParser.at(expansion, "capacityBytes") instanceof Number capacity
        && JsonParser.at(expansion, "nodeExpansionRequired") instanceof Boolean required) {
      return Optional.of(new ExpandResult(capacity.longValue(), required));
    }
    return Optional.empty();
  }
}
