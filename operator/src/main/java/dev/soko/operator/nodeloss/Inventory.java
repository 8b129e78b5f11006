package dev.soko.operator.nodeloss;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.util.List;
import java.util.Set;

/**
 * What node-loss handling reads: the Nodes that exist and the PVs of one driver (slimmed by {@link
 * Slim}), from the operator's informers.
 */
public interface Inventory {
  Set<String> nodeNames();

  List<PersistentVolume> volumesOf(String driver);
}
