package dev.soko.operator.model;

/** Containers Soko deploys; the key is the container name and the image key of the table. */
public enum Component {
  DRIVER("soko-driver"),
  PROVISIONER("csi-provisioner"),
  RESIZER("csi-resizer"),
  SNAPSHOTTER("csi-snapshotter"),
  REGISTRAR("node-driver-registrar"),
  LIVENESS_PROBE("liveness-probe"),
  HEALTH_MONITOR("csi-external-health-monitor-controller"),
  /**
   * Only on rows that have it: the sidecar of changed block tracking ({@link SnapshotMetadata}).
   */
  SNAPSHOT_METADATA("csi-snapshot-metadata");

  private final String key;

  Component(String key) {
    this.key = key;
  }

  public String key() {
    return key;
  }
}
