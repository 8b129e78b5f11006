/**
 * The controller → node path: a controller-side CSI call (ControllerModifyVolume,
 * ControllerExpandVolume, the snapshot calls) that only the node owning the volume can carry out
 * becomes a NodeRequest in the API server, which that node's driver applies and acknowledges in the
 * request's status. No listener on nodes, nothing kept in memory that a restart of either side
 * would lose: the request is the state. docs/design.md ("Controller to node") gives the failure
 * modes and their tests.
 */
package dev.soko.driver.handoff;
