package dev.soko.operator.reconcile;

import dev.soko.operator.datatls.DataTlsCertificates;
import dev.soko.operator.nodeloss.NodeLoss;
import dev.soko.operator.reconcile.apply.Applier;
import dev.soko.operator.reconcile.apply.CsiDriverReplacer;
import dev.soko.operator.reconcile.apply.EventRecorder;
import dev.soko.operator.reconcile.apply.GroupSnapshotClassReplacer;
import dev.soko.operator.reconcile.apply.Pruner;
import dev.soko.operator.reconcile.apply.ReportCleanup;
import dev.soko.operator.reconcile.apply.StorageClassReplacer;
import dev.soko.operator.reconcile.apply.UnclaimedSnapshots;
import dev.soko.operator.reconcile.apply.Uninstaller;
import dev.soko.operator.reconcile.observe.ClusterObserver;
import dev.soko.operator.reconcile.status.RolloutProgress;

/**
 * What {@link StorageClusterReconciler} works with, built where the operator is wired ({@code
 * runtime.SokoOperator}) and passed in whole, so that the reconciler builds none of them and a test
 * may pass its own.
 *
 * @param observer reads the cluster (never writes)
 * @param applier applies the desired objects
 * @param pruner deletes owned objects no longer desired
 * @param uninstaller deletes everything on uninstall: the workloads, then, their pods gone, the
 *     rest
 * @param csiDriverReplacer deletes a CSIDriver whose immutable fields changed
 * @param groupSnapshotClassReplacer deletes a VolumeGroupSnapshotClass whose immutable fields
 *     changed
 * @param storageClassReplacer deletes the StorageCluster's StorageClasses whose immutable fields
 *     changed
 * @param nodeLoss marks and deletes lost nodes' volumes (spec.nodeLoss)
 * @param reportCleanup deletes StorageNode reports nobody reads
 * @param unclaimedSnapshots warns of imported snapshot contents no node took
 * @param rollouts remembers when the node plugin's rollout last moved
 * @param events records events on a StorageCluster
 * @param dataTls keeps and renews the data path's certificates
 */
public record Collaborators(
    ClusterObserver observer,
    Applier applier,
    Pruner pruner,
    Uninstaller uninstaller,
    CsiDriverReplacer csiDriverReplacer,
    GroupSnapshotClassReplacer groupSnapshotClassReplacer,
    StorageClassReplacer storageClassReplacer,
    NodeLoss nodeLoss,
    ReportCleanup reportCleanup,
    UnclaimedSnapshots unclaimedSnapshots,
    RolloutProgress rollouts,
    EventRecorder events,
    DataTlsCertificates dataTls) {}
