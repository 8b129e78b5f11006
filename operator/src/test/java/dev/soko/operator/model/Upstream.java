package dev.soko.operator.model;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the kubernetes-csi sidecars' sources say at the tags the versions table names, as read from
 * the tags (each fact carries its repository, path and tag). {@link RenderRowsTest} checks every
 * row's render against these; a row with a tag that is not here fails until its facts are read and
 * added.
 */
final class Upstream {
  private Upstream() {}

  /**
   * One sidecar release.
   *
   * @param flags the command-line flags it defines (the subset Soko may pass), from {@code
   *     flagsSource}
   * @param gates its feature gates and their defaults, from {@code gatesSource}; null: the release
   *     has no --feature-gates flag
   * @param rules its upstream ClusterRole and Role rules, "group/resource" to verbs, from {@code
   *     rbacSource}; empty when it ships none
   */
  record Release(
      String image,
      Set<String> flags,
      String flagsSource,
      Map<String, Boolean> gates,
      String gatesSource,
      Map<String, Set<String>> rules,
      String rbacSource) {}

  private static final String KLOG = "v"; // klog's verbosity, every sidecar

  private static final Set<String> PROVISIONER_FLAGS =
      Set.of(
          "csi-address",
          "node-deployment",
          "strict-topology",
          "immediate-topology",
          "extra-create-metadata",
          "enable-capacity",
          "capacity-ownerref-level",
          "kube-api-qps",
          "kube-api-burst",
          "feature-gates",
          "http-endpoint",
          "leader-election",
          "timeout",
          KLOG);

  private static Map<String, Set<String>> provisionerRules(
      Set<String> pvVerbs, Set<String> snapshotVerbs) {
    Map<String, Set<String>> r = new TreeMap<>();
    r.put("/persistentvolumes", pvVerbs);
    r.put("/persistentvolumeclaims", Set.of("get", "list", "watch", "update"));
    r.put("storage.k8s.io/storageclasses", Set.of("get", "list", "watch"));
    r.put("/events", Set.of("list", "watch", "create", "update", "patch"));
    r.put("snapshot.storage.k8s.io/volumesnapshots", snapshotVerbs);
    r.put("snapshot.storage.k8s.io/volumesnapshotcontents", Set.of("get", "list"));
    r.put("storage.k8s.io/csinodes", Set.of("get", "list", "watch"));
    r.put("/nodes", Set.of("get", "list", "watch"));
    r.put("storage.k8s.io/volumeattachments", Set.of("get", "list", "watch"));
    // Role external-provisioner-cfg
    r.put(
        "coordination.k8s.io/leases", Set.of("get", "watch", "list", "delete", "update", "create"));
    r.put(
        "storage.k8s.io/csistoragecapacities",
        Set.of("get", "list", "watch", "create", "update", "patch", "delete"));
    r.put("/pods", Set.of("get"));
    r.put("apps/replicasets", Set.of("get"));
    return r;
  }

  private static Release provisioner(
      String tag, Map<String, Boolean> gates, Set<String> pvVerbs, Set<String> snapshotVerbs) {
    String repo = "kubernetes-csi/external-provisioner ";
    String flags =
        tag.startsWith("v6")
            ? repo
                + "cmd/csi-provisioner/csi-provisioner.go @"
                + tag
                + " + kubernetes-csi/csi-lib-utils standardflags/flags.go @v0.25.0 (its go.mod)"
            : repo + "cmd/csi-provisioner/csi-provisioner.go @" + tag;
    return new Release(
        "sig-storage/csi-provisioner:" + tag,
        PROVISIONER_FLAGS,
        flags,
        gates,
        repo + "pkg/features/features.go @" + tag,
        provisionerRules(pvVerbs, snapshotVerbs),
        repo + "deploy/kubernetes/rbac.yaml @" + tag);
  }

  private static final Set<String> SNAPSHOTTER_FLAGS =
      Set.of(
          "csi-address",
          "node-deployment",
          "leader-election",
          "http-endpoint",
          "extra-create-metadata",
          "timeout",
          KLOG);

  private static Map<String, Set<String>> snapshotterRules(boolean v7) {
    Map<String, Set<String>> r = new TreeMap<>();
    r.put("/events", Set.of("list", "watch", "create", "update", "patch"));
    r.put("snapshot.storage.k8s.io/volumesnapshotclasses", Set.of("get", "list", "watch"));
    if (v7) {
      r.put(
          "snapshot.storage.k8s.io/volumesnapshots",
          Set.of("get", "list", "watch", "update", "patch", "create"));
      r.put(
          "snapshot.storage.k8s.io/volumesnapshotcontents",
          Set.of("get", "list", "watch", "update", "patch", "create"));
    } else {
      r.put(
          "snapshot.storage.k8s.io/volumesnapshotcontents",
          Set.of("get", "list", "watch", "update", "patch"));
    }
    r.put("snapshot.storage.k8s.io/volumesnapshotcontents/status", Set.of("update", "patch"));
    r.put(
        "groupsnapshot.storage.k8s.io/volumegroupsnapshotclasses", Set.of("get", "list", "watch"));
    r.put(
        "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents",
        Set.of("get", "list", "watch", "update", "patch"));
    r.put(
        "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents/status",
        Set.of("update", "patch"));
    // Role external-snapshotter-leaderelection
    r.put(
        "coordination.k8s.io/leases", Set.of("get", "watch", "list", "delete", "update", "create"));
    return r;
  }

  private static Release snapshotter(String tag, Map<String, Boolean> gates) {
    String repo = "kubernetes-csi/external-snapshotter ";
    boolean v7 = tag.startsWith("v7");
    Set<String> flags = new TreeSet<>(SNAPSHOTTER_FLAGS);
    if (gates != null) {
      flags.add("feature-gates");
    } else {
      flags.add("enable-volume-group-snapshots");
    }
    return new Release(
        "sig-storage/csi-snapshotter:" + tag,
        flags,
        repo
            + "cmd/csi-snapshotter/main.go @"
            + tag
            + (tag.equals("v8.7.0") ? " + csi-lib-utils standardflags/flags.go @v0.25.0" : ""),
        gates,
        gates == null
            ? repo + "cmd/csi-snapshotter/main.go @" + tag + " (no --feature-gates)"
            : repo + "pkg/features/features.go @" + tag,
        snapshotterRules(v7),
        repo + "deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml @" + tag);
  }

  private static final Map<String, Set<String>> RESIZER_RULES =
      Map.of(
          "/persistentvolumes", Set.of("get", "list", "watch", "patch"),
          "/persistentvolumeclaims", Set.of("get", "list", "watch"),
          "/pods", Set.of("get", "list", "watch"),
          "/persistentvolumeclaims/status", Set.of("patch"),
          "/events", Set.of("list", "watch", "create", "update", "patch"),
          "storage.k8s.io/volumeattributesclasses", Set.of("get", "list", "watch"),
          // Role external-resizer-cfg
          "coordination.k8s.io/leases",
              Set.of("get", "watch", "list", "delete", "update", "create"));

  private static Release resizer(String tag, Map<String, Boolean> gates) {
    String repo = "kubernetes-csi/external-resizer ";
    return new Release(
        "sig-storage/csi-resizer:" + tag,
        Set.of(
            "csi-address",
            "leader-election",
            "leader-election-namespace",
            "http-endpoint",
            "timeout",
            "handle-volume-inuse-error",
            "feature-gates",
            KLOG),
        repo
            + "cmd/csi-resizer/main.go @"
            + tag
            + (tag.startsWith("v2") ? " + csi-lib-utils standardflags/flags.go @v0.24.0" : ""),
        gates,
        repo + "pkg/features/features.go @" + tag,
        RESIZER_RULES,
        repo + "deploy/kubernetes/rbac.yaml @" + tag);
  }

  private static Release registrar(String tag) {
    return new Release(
        "sig-storage/csi-node-driver-registrar:" + tag,
        Set.of(
            "csi-address",
            "kubelet-registration-path",
            "plugin-registration-path",
            "http-endpoint",
            "health-port",
            "timeout",
            KLOG),
        "kubernetes-csi/node-driver-registrar cmd/csi-node-driver-registrar/main.go @" + tag,
        null,
        "kubernetes-csi/node-driver-registrar cmd/csi-node-driver-registrar/main.go @"
            + tag
            + " (no --feature-gates)",
        Map.of(),
        "kubernetes-csi/node-driver-registrar @" + tag + " ships no RBAC (it calls no API)");
  }

  private static Release livenessProbe(String tag) {
    return new Release(
        "sig-storage/livenessprobe:" + tag,
        Set.of("csi-address", "http-endpoint", "probe-timeout", "metrics-path", KLOG),
        "kubernetes-csi/livenessprobe cmd/livenessprobe/main.go @"
            + tag
            + " (--health-port: deprecated there, not passed)",
        null,
        "kubernetes-csi/livenessprobe cmd/livenessprobe/main.go @" + tag + " (no --feature-gates)",
        Map.of(),
        "kubernetes-csi/livenessprobe @" + tag + " ships no RBAC (it calls no API)");
  }

  /**
   * external-snapshot-metadata's sidecar: its flags are its own FlagSet's and klog's (InitFlags on
   * the same set); no --feature-gates. Its ClusterRole, read but not copied: Soko's sidecar role
   * drops what v1.0.0 never calls (writes of SnapshotMetadataServices, get of reviews) and adds the
   * snapshot classes it reads ({@link SnapshotMetadata#sidecarRules}).
   */
  private static Release snapshotMetadata(String tag) {
    String repo = "kubernetes-csi/external-snapshot-metadata ";
    return new Release(
        "sig-storage/csi-snapshot-metadata:" + tag,
        Set.of(
            "kubeconfig",
            "csi-address",
            "timeout",
            "port",
            "tls-cert",
            "tls-key",
            "audience",
            "max-streaming-duration-min",
            "kube-api-qps",
            "kube-api-burst",
            "http-endpoint",
            "metrics-path",
            "disable-metrics",
            KLOG),
        repo + "pkg/sidecar/sidecar.go @" + tag,
        null,
        repo + "pkg/sidecar/sidecar.go @" + tag + " (no --feature-gates)",
        Map.of(
            "cbt.storage.k8s.io/snapshotmetadataservices",
            Set.of("get", "list", "watch", "create", "update", "patch", "delete"),
            "authentication.k8s.io/tokenreviews",
            Set.of("create", "get"),
            "authorization.k8s.io/subjectaccessreviews",
            Set.of("create", "get"),
            "snapshot.storage.k8s.io/volumesnapshots",
            Set.of("get", "list"),
            "snapshot.storage.k8s.io/volumesnapshotcontents",
            Set.of("get", "list")),
        repo + "deploy/snapshot-metadata-cluster-role.yaml @" + tag);
  }

  private static final Map<String, Release> RELEASES = new TreeMap<>();

  private static void add(Release r) {
    RELEASES.put(r.image(), r);
  }

  static {
    Set<String> pvNoPatch = Set.of("get", "list", "watch", "create", "delete");
    Set<String> pv = Set.of("get", "list", "watch", "create", "patch", "delete");
    Set<String> snapshotsRead = Set.of("get", "list");
    add(
        provisioner(
            "v4.0.1",
            Map.of(
                "Topology", false,
                "HonorPVReclaimPolicy", false,
                "CrossNamespaceVolumeDataSource", false,
                "VolumeAttributesClass", false),
            pvNoPatch,
            snapshotsRead));
    add(
        provisioner(
            "v5.2.0",
            Map.of(
                "Topology", true,
                "HonorPVReclaimPolicy", true,
                "CrossNamespaceVolumeDataSource", false,
                "VolumeAttributesClass", false),
            pv,
            snapshotsRead));
    add(
        provisioner(
            "v6.4.0",
            Map.of(
                "Topology", true,
                "CrossNamespaceVolumeDataSource", false,
                "VolumeAttributesClass", true,
                "ReleaseLeaderElectionOnExit", false),
            pv,
            Set.of("get", "list", "watch", "update")));
    add(snapshotter("v7.0.2", null));
    add(snapshotter("v8.2.1", Map.of("CSIVolumeGroupSnapshot", false)));
    add(
        snapshotter(
            "v8.7.0",
            Map.of("CSIVolumeGroupSnapshot", true, "ReleaseLeaderElectionOnExit", false)));
    add(
        resizer(
            "v1.10.1",
            Map.of(
                "AnnotateFsResize", false,
                "RecoverVolumeExpansionFailure", false,
                "VolumeAttributesClass", false)));
    add(
        resizer(
            "v1.13.2",
            Map.of(
                "AnnotateFsResize", false,
                "RecoverVolumeExpansionFailure", true,
                "VolumeAttributesClass", false)));
    add(
        resizer(
            "v2.3.0",
            Map.of(
                "AnnotateFsResize", true,
                "VolumeAttributesClass", true,
                "ReleaseLeaderElectionOnExit", false)));
    for (String tag : new String[] {"v2.10.1", "v2.13.0", "v2.17.0"}) {
      add(registrar(tag));
    }
    for (String tag : new String[] {"v2.12.0", "v2.15.0", "v2.19.0"}) {
      add(livenessProbe(tag));
    }
    add(snapshotMetadata("v1.0.0"));
  }

  /** The release of an image of the table, or an error that says what to read. */
  static Release release(String image) {
    Release r = RELEASES.get(image);
    if (r == null) {
      throw new AssertionError(
          "no upstream facts for "
              + image
              + ": read its flags, feature gates and deploy/kubernetes RBAC at that tag and add"
              + " them to Upstream");
    }
    return r;
  }

  /**
   * csi-driver-host-path's deploy/kubernetes-distributed (the reference distributed deployment) of
   * the release that runs the same livenessprobe as the row.
   *
   * @param registrarHealth whether its node-driver-registrar runs --http-endpoint=:9809 with a
   *     liveness probe on /healthz
   */
  record HostPath(String tag, boolean registrarHealth) {
    String source(String file) {
      return "kubernetes-csi/csi-driver-host-path deploy/kubernetes-distributed/hostpath/"
          + file
          + " @"
          + tag;
    }
  }

  private static final Map<String, HostPath> HOST_PATH =
      Map.of(
          // v1.18.0: provisioner v6.3.0, registrar v2.17.0, livenessprobe v2.19.0
          "sig-storage/livenessprobe:v2.19.0", new HostPath("v1.18.0", true),
          // v1.16.0: provisioner v5.2.0, registrar v2.12.0, livenessprobe v2.15.0
          "sig-storage/livenessprobe:v2.15.0", new HostPath("v1.16.0", false),
          // v1.14.0: provisioner v5.0.1, registrar v2.10.1, livenessprobe v2.12.0
          "sig-storage/livenessprobe:v2.12.0", new HostPath("v1.14.0", false));

  static HostPath hostPath(String livenessProbeImage) {
    HostPath h = HOST_PATH.get(livenessProbeImage);
    if (h == null) {
      throw new AssertionError(
          "no csi-driver-host-path release recorded for " + livenessProbeImage + "; add one");
    }
    return h;
  }
}
