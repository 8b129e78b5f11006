package dev.soko.operator.nodeloss;

import java.time.Instant;

/**
 * A PersistentVolume of the driver whose node affinity names only Nodes that do not exist.
 *
 * @param claim the bound claim as namespace/name, null when unbound
 * @param claimUid the claim's UID from the PV's claimRef, null when unknown
 * @param markedSince the {@link VolumeMarks#MISSING_SINCE} annotation, null when unmarked
 * @param keepByReclaimPolicy the PV's own reclaimPolicy is Retain: never deleted
 * @param deleting the PV already has a deletionTimestamp
 * @param provisionerFinalizer the PV still carries the external-provisioner's finalizer
 */
record Orphan(
    String pv,
    String claim,
    String claimUid,
    String node,
    Instant markedSince,
    boolean keepByReclaimPolicy,
    boolean deleting,
    boolean provisionerFinalizer) {}
