package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** Which PersistentVolumes of one driver are bound to Nodes that are gone (pure). */
final class OrphanFinder {
  /** The driver's topology key; its value is the node name (NodeGetInfo). */
  static final String TOPOLOGY_KEY = "topology.soko.dev/node";

  private OrphanFinder() {}

  /**
   * @param existingNodes names of the Nodes that exist
   * @return the orphans, sorted by PV name
   */
  static List<Orphan> find(
      String driver, Set<String> existingNodes, Collection<PersistentVolume> volumes) {
    List<Orphan> out = new ArrayList<>();
    for (PersistentVolume pv : volumes) {
      if (!ofDriver(pv, driver)) {
        continue;
      }
      Set<String> nodes = nodes(pv);
      if (nodes.isEmpty() || nodes.stream().anyMatch(existingNodes::contains)) {
        continue;
      }
      out.add(orphan(pv, nodes.iterator().next()));
    }
    out.sort(Comparator.comparing(Orphan::pv));
    return out;
  }

  /** Names of PVs of the driver that carry the mark while a Node they name exists again. */
  static List<String> returned(
      String driver, Set<String> existingNodes, Collection<PersistentVolume> volumes) {
    return volumes.stream()
        .filter(pv -> ofDriver(pv, driver))
        .filter(pv -> annotation(pv) != null)
        .filter(pv -> nodes(pv).stream().anyMatch(existingNodes::contains))
        .map(pv -> pv.getMetadata().getName())
        .sorted()
        .toList();
  }

  static boolean ofDriver(PersistentVolume pv, String driver) {
    return pv.getSpec() != null
        && pv.getSpec().getCsi() != null
        && driver.equals(pv.getSpec().getCsi().getDriver());
  }

  /**
   * The node names a PV's required node affinity allows on the topology key (operator In). Soko
   * writes one term with one value; several values mean several candidate nodes, and the PV is
   * orphaned only when all of them are gone. A PV without such a term is not node-bound.
   */
  static Set<String> nodes(PersistentVolume pv) {
    Set<String> names = new TreeSet<>();
    var affinity = pv.getSpec().getNodeAffinity();
    if (affinity == null || affinity.getRequired() == null) {
      return names;
    }
    List<NodeSelectorTerm> terms = affinity.getRequired().getNodeSelectorTerms();
    for (NodeSelectorTerm term : terms == null ? List.<NodeSelectorTerm>of() : terms) {
      List<NodeSelectorRequirement> exprs = term.getMatchExpressions();
      for (NodeSelectorRequirement r : exprs == null ? List.<NodeSelectorRequirement>of() : exprs) {
        if (TOPOLOGY_KEY.equals(r.getKey())
            && "In".equals(r.getOperator())
            && r.getValues() != null) {
          names.addAll(r.getValues());
        }
      }
    }
    return names;
  }

  private static Orphan orphan(PersistentVolume pv, String node) {
    ObjectReference ref = pv.getSpec().getClaimRef();
    String claim =
        ref == null || ref.getName() == null ? null : ref.getNamespace() + "/" + ref.getName();
    List<String> finalizers = pv.getMetadata().getFinalizers();
    return new Orphan(
        pv.getMetadata().getName(),
        claim,
        ref == null ? null : ref.getUid(),
        node,
        markedSince(pv),
        "Retain".equals(pv.getSpec().getPersistentVolumeReclaimPolicy()),
        pv.getMetadata().getDeletionTimestamp() != null,
        finalizers != null && finalizers.contains(VolumeMarks.PROVISIONER_FINALIZER));
  }

  private static String annotation(PersistentVolume pv) {
    Map<String, String> a = pv.getMetadata().getAnnotations();
    return a == null ? null : a.get(VolumeMarks.MISSING_SINCE);
  }

  /** The mark's time; an unreadable mark counts as unmarked and is rewritten. */
  static Instant markedSince(PersistentVolume pv) {
    String value = annotation(pv);
    if (value == null) {
      return null;
    }
    try {
      return Instant.parse(value);
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
