package dev.soko.driver.report;

import dev.soko.driver.json.Json;
import dev.soko.driver.pool.PoolReport;
import dev.soko.driver.pool.PoolVerdict;
import dev.soko.driver.volume.MetricsView;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The objects the driver writes about its node, as JSON: its StorageNode (soko.dev/v1alpha1, the
 * schema of crd's {@code StorageNode}) and the Warning Event for a refused pool. Pure: the readings
 * come in, text goes out. Bounded: at most {@link #MAX_POOLS} pools, messages cut at {@link
 * #MAX_MESSAGE} characters.
 */
final class NodeReport {
  static final String API_VERSION = "soko.dev/v1alpha1";
  static final String KIND = "StorageNode";
  static final int MAX_POOLS = 32;
  static final int MAX_MESSAGE = 1024;
  static final String EVENT_REASON = "PoolRefused";
  static final String DESELECTED_REASON = "PoolDeselected";
  static final String COMPONENT = "soko-driver";

  private NodeReport() {}

  /**
   * The whole StorageNode for a server-side apply: every field the driver owns. Without a data
   * port, {@code dataEndpoint} is left out, so an apply removes one an earlier run advertised.
   */
  static String storageNode(
      ReportIdentity id,
      String version,
      Optional<String> dataEndpoint,
      Instant now,
      Map<String, PoolVerdict> verdicts,
      MetricsView metrics) {
    Map<String, MetricsView.PoolRow> rows = new LinkedHashMap<>();
    metrics.pools().forEach(r -> rows.put(r.report().pool(), r));
    List<Object> pools = new ArrayList<>();
    int ready = 0;
    int refused = 0;
    int volumes = 0;
    for (Map.Entry<String, PoolVerdict> entry : verdicts.entrySet()) {
      PoolVerdict verdict = entry.getValue();
      MetricsView.PoolRow row = rows.get(entry.getKey());
      ready += verdict.ready() ? 1 : 0;
      refused += verdict.state() == PoolVerdict.State.REFUSED ? 1 : 0;
      volumes += row == null ? 0 : row.volumes();
      if (pools.size() < MAX_POOLS) {
        pools.add(pool(entry.getKey(), verdict, row));
      }
    }
    Map<String, Object> object = new LinkedHashMap<>();
    object.put("apiVersion", API_VERSION);
    object.put("kind", KIND);
    object.put(
        "metadata",
        Json.object(
            "name",
            id.name(),
            "labels",
            Json.object(
                ReportIdentity.LABEL_CLUSTER,
                id.storageCluster(),
                ReportIdentity.LABEL_NODE,
                id.node())));
    object.put("node", id.node());
    object.put("observedTime", time(now));
    object.put("driverVersion", cut(version, 64));
    dataEndpoint.ifPresent(endpoint -> object.put("dataEndpoint", endpoint));
    object.put("ready", ready);
    object.put("refused", refused);
    object.put("volumes", volumes);
    object.put("pools", pools);
    object.put("more", verdicts.size() - pools.size());
    return Json.write(object);
  }

  private static Map<String, Object> pool(
      String name, PoolVerdict verdict, MetricsView.PoolRow row) {
    Map<String, Object> pool = new LinkedHashMap<>();
    pool.put("name", name);
    pool.put("state", state(verdict.state()));
    pool.put("message", verdict.reason().isEmpty() ? null : cut(verdict.reason(), MAX_MESSAGE));
    if (row != null) {
      // A pool that is open: a refused one may be, when an earlier run left volumes there.
      PoolReport report = row.report();
      pool.put("sizeBytes", report.usage().sizeBytes());
      pool.put("usedBytes", report.usage().usedBytes());
      pool.put("provisionedBytes", report.provisionedBytes());
      pool.put("headroomBytes", Math.max(0, report.headroomBytes()));
      pool.put("volumes", row.volumes());
    }
    return pool;
  }

  static String state(PoolVerdict.State state) {
    return switch (state) {
      case READY -> "Ready";
      case REFUSED -> "Refused";
      case NOT_SELECTED -> "NotSelected";
    };
  }

  /** The Warning Event for a pool this node refuses. */
  static String refusedEvent(ReportIdentity id, String pool, String reason, Instant now) {
    return nodeEvent(
        id,
        EVENT_REASON,
        "pool-refused",
        "pool " + pool + " of StorageCluster " + id.storageCluster() + " refused: " + reason,
        now);
  }

  /**
   * The Warning Event for a pool that holds volumes and stopped being selected on this node (its
   * nodeSelector no longer matches the node's labels): the volumes keep working, but an admin who
   * relabelled a node by mistake should hear of it before the pool silently fills elsewhere.
   */
  static String deselectedEvent(
      ReportIdentity id, String pool, String reason, int volumes, Instant now) {
    return nodeEvent(
        id,
        DESELECTED_REASON,
        "pool-deselected",
        "pool "
            + pool
            + " of StorageCluster "
            + id.storageCluster()
            + " is no longer selected on this node ("
            + reason
            + "); its "
            + volumes
            + (volumes == 1 ? " volume keeps" : " volumes keep")
            + " working, new volumes of the pool go to other nodes",
        now);
  }

  /**
   * A Warning Event on the Node (core/v1, legacy form). An event about a cluster-scoped object must
   * live in namespace default (the API server refuses others), and {@code kubectl describe node}
   * finds it by the node's name as its uid, as the kubelet's own node events do. Two installations
   * may have a pool of the same name on one node, so the message says whose it is.
   */
  private static String nodeEvent(
      ReportIdentity id, String reason, String namePart, String message, Instant now) {
    String node = id.node();
    Map<String, Object> event = new LinkedHashMap<>();
    event.put("apiVersion", "v1");
    event.put("kind", "Event");
    event.put(
        "metadata",
        Json.object("generateName", node + "." + namePart + ".", "namespace", "default"));
    event.put(
        "involvedObject",
        Json.object("apiVersion", "v1", "kind", "Node", "name", node, "uid", node));
    event.put("type", "Warning");
    event.put("reason", reason);
    event.put("message", cut(message, MAX_MESSAGE));
    event.put("source", Json.object("component", COMPONENT, "host", node));
    event.put("reportingComponent", COMPONENT);
    event.put("reportingInstance", node);
    event.put("firstTimestamp", time(now));
    event.put("lastTimestamp", time(now));
    event.put("count", 1);
    return Json.write(event);
  }

  private static String time(Instant now) {
    return now.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private static String cut(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max - 1) + "…";
  }
}
