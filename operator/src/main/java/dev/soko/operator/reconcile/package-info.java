/**
 * The StorageCluster reconciler: observe → validate → apply → status, one step per sub-package.
 *
 * <ul>
 *   <li>{@code kinds}: the one list of kinds the operator touches ({@code KindRegistry}), their
 *       informers and the cache the other steps read.
 *   <li>{@code observe}: reads the cluster (caches, discovery, the node drivers' reports); never
 *       writes.
 *   <li>{@code apply}: every write: the desired objects, their replacement and pruning, left-over
 *       reports, events and the status patch.
 *   <li>{@code status}: computes the status from what was observed; pure, never writes.
 * </ul>
 */
package dev.soko.operator.reconcile;
