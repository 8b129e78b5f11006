/**
 * The node-to-node data path (docs/design.md, "Node to node"): each node plugin serves the {@code
 * soko.data.v1} SnapshotData service on its data port ({@link DataServer}), under mutual TLS with
 * certificates whose subject CN is the caller's role ({@link DataTls}, {@link RoleCheck}); a
 * restore on another node reads a snapshot, and a clone a point-in-time copy of a volume, through
 * {@link SnapshotReader}; the controller takes a group snapshot whose members are on several nodes
 * through the nodes' ports ({@link GroupCoordinator}, {@link GroupPartService}). Only allocated
 * ranges travel, in chunks of at most 1 MiB, each with its CRC32C, and a stream is complete only
 * with its End message. Nothing here knows Kubernetes: where a node's port is comes from its
 * StorageNode, read by the caller.
 */
package dev.soko.driver.transfer;
