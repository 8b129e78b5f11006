package dev.soko.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Admission refuses every bad value with a message naming the field: one row per field of the CRD's
 * spec (at least), on the real API server. {@link #everySchemaFieldHasABadValueRow} fails when a
 * field is added to the model without a row here.
 */
class StorageClusterValidationIT {
  static TestCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = TestCluster.get();
  }

  private static final String POOL = "{name: main, path: /var/lib/soko/main}";
  private static final String POOLS = "pools: [" + POOL + "]";

  /**
   * Fields that no value of their schema type can make wrong. Empty: a boolean's bad value is a
   * non-boolean, which the API server refuses naming the field like any other. A field put here
   * needs a comment saying why it cannot be bad.
   */
  static final Set<String> CANNOT_BE_BAD = Set.of();

  /** A bad value for one field: the spec (null: none at all), and what the refusal must say. */
  record Row(String field, String spec, String names, String why) {
    Arguments args() {
      return Arguments.of(field, spec, names, why);
    }
  }

  static List<Row> rows() {
    Stream<Row> table =
        Stream.of(
            // The object without a spec: there is nothing to install from it.
            new Row("spec", null, "spec: Required value", "Required value"),
            // controller
            row(
                "spec.controller.affinity",
                "controller: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
                    + " {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Near,"
                    + " values: [a]}]}]}}}}",
                "spec.controller.affinity",
                "nodeAffinity match expressions"),
            row(
                "spec.controller.nodeSelector",
                "controller: {nodeSelector: {'bad key!': x}}",
                "spec.controller.nodeSelector",
                "label keys"),
            row(
                "spec.controller.priorityClassName",
                "controller: {priorityClassName: Critical_Class}",
                "spec.controller.priorityClassName",
                "PriorityClass name"),
            row(
                "spec.controller.replicas",
                "controller: {replicas: -1}",
                "spec.controller.replicas",
                "must not be negative"),
            row(
                "spec.controller.replicas",
                "controller: {replicas: 11}",
                "spec.controller.replicas",
                "less than or equal to 10"),
            // The key the field reference once documented for the controller and nothing read.
            row(
                "spec.controller.resources",
                "controller: {resources: {csi-provisioner: {limits: {cpu: 1}}}}",
                "spec.controller.resources",
                "keys must name a container of the controller pods"),
            row(
                "spec.controller.resources",
                "controller: {resources: {liveness-probe: {limits: {cpu: 1}}}}",
                "spec.controller.resources may name liveness-probe only with",
                "Sidecars"),
            row(
                "spec.controller.resources",
                "snapshots: {enabled: false}\n"
                    + "controller: {resources: {csi-group-snapshotter: {limits: {cpu: 1}}}}",
                "spec.controller.resources may name csi-group-snapshotter only with",
                "spec.snapshots.enabled"),
            row(
                "spec.controller.tolerations",
                "controller: {tolerations: [{key: a, operator: Exists, value: b}]}",
                "spec.controller.tolerations",
                "each toleration"),
            // driver
            row(
                "spec.driver.extraArgs",
                "driver: {extraArgs: ['--mode=controller']}",
                "spec.driver.extraArgs",
                "--allowed-path-root"),
            row(
                "spec.driver.image",
                "driver: {image: 'Registry.Example/Soko Driver:1'}",
                "spec.driver.image",
                "image reference"),
            row(
                "spec.driver.logLevel",
                "driver: {logLevel: loud}",
                "spec.driver.logLevel",
                "Unsupported value: \"loud\""),
            row(
                "spec.driver.maxVolumesPerNode",
                "driver: {maxVolumesPerNode: -1}",
                "spec.driver.maxVolumesPerNode",
                "greater than or equal to 0"),
            row(
                "spec.driver.metricsPort",
                "driver: {metricsPort: 9808}",
                "spec.driver.metricsPort",
                "health port"),
            row(
                "spec.driver.metricsPort",
                "driver: {metricsPort: 9811}",
                "spec.driver.metricsPort",
                "csi-resizer"),
            row(
                "spec.driver.metricsPort",
                "driver: {metricsPort: 70000}",
                "spec.driver.metricsPort",
                "less than or equal to 65535"),
            row(
                "spec.driver.metricsPort",
                "driver: {registration: Sidecars, metricsPort: 9809}",
                "spec.driver.metricsPort must not be 9809",
                "node-driver-registrar"),
            row(
                "spec.driver.name",
                "driver: {name: Bad_Name}",
                "spec.driver.name",
                "must be a DNS subdomain"),
            row(
                "spec.driver.registration",
                "driver: {registration: Kubelet}",
                "spec.driver.registration",
                "Unsupported value: \"Kubelet\""),
            // features
            row(
                "spec.features.capacityTracking",
                "features: {capacityTracking: 'sometimes'}",
                "spec.features.capacityTracking",
                "must be of type boolean"),
            row(
                "spec.features.volumeHealthMonitor",
                "features: {volumeHealthMonitor: 'sometimes'}",
                "spec.features.volumeHealthMonitor",
                "must be of type boolean"),
            row(
                "spec.features.changedBlockTracking",
                "features: {changedBlockTracking: 'sometimes'}",
                "spec.features.changedBlockTracking",
                "must be of type boolean"),
            row(
                "spec.features.immediateGrowth",
                "features: {immediateGrowth: 'soon'}",
                "spec.features.immediateGrowth",
                "must be of type boolean"),
            // images
            row(
                "spec.images.overrides.healthMonitor",
                "images: {overrides: {healthMonitor: 'monitor image'}}",
                "spec.images.overrides.healthMonitor",
                "image reference"),
            row(
                "spec.images.overrides.livenessProbe",
                "images: {overrides: {livenessProbe: 'https://registry.example/livenessprobe'}}",
                "spec.images.overrides.livenessProbe",
                "image reference"),
            row(
                "spec.images.overrides.provisioner",
                "images: {overrides: {provisioner: 'sig-storage/CSI-Provisioner:v5'}}",
                "spec.images.overrides.provisioner",
                "image reference"),
            row(
                "spec.images.overrides.registrar",
                "images: {overrides: {registrar: ''}}",
                "spec.images.overrides.registrar",
                "image reference"),
            row(
                "spec.images.overrides.resizer",
                "images: {overrides: {resizer: 'registry.example/csi-resizer:'}}",
                "spec.images.overrides.resizer",
                "image reference"),
            row(
                "spec.images.overrides.snapshotter",
                "images: {overrides: {snapshotter: 'registry.example//csi-snapshotter'}}",
                "spec.images.overrides.snapshotter",
                "image reference"),
            row(
                "spec.images.pullPolicy",
                "images: {pullPolicy: Sometimes}",
                "spec.images.pullPolicy",
                "Unsupported value: \"Sometimes\""),
            row(
                "spec.images.pullSecrets",
                "images: {pullSecrets: [Mirror_Credentials]}",
                "spec.images.pullSecrets",
                "Secret name"),
            row(
                "spec.images.registry",
                "images: {registry: 'https://registry.example'}",
                "spec.images.registry",
                "without scheme"),
            row(
                "spec.images.registry",
                "images: {registry: 'registry.example/mirror/'}",
                "spec.images.registry",
                "trailing '/'"),
            row(
                "spec.namespace",
                "namespace: Soko_NS",
                "spec.namespace",
                "must be a valid namespace name"),
            // nodePlugin
            row(
                "spec.nodePlugin.affinity",
                "nodePlugin: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
                    + " {nodeSelectorTerms: [{matchExpressions: [{key: size, operator: Gt,"
                    + " values: ['1', '2']}]}]}}}}",
                "spec.nodePlugin.affinity",
                "nodeAffinity match expressions"),
            row(
                "spec.nodePlugin.kubeletDir",
                "nodePlugin: {kubeletDir: '/var/lib//kubelet'}",
                "spec.nodePlugin.kubeletDir",
                "absolute clean path"),
            row(
                "spec.nodePlugin.kubeletDir",
                "nodePlugin: {kubeletDir: 'var/lib/kubelet'}",
                "spec.nodePlugin.kubeletDir",
                "absolute clean path"),
            row(
                "spec.nodePlugin.nodeSelector",
                "nodePlugin: {nodeSelector: {zone: 'a b'}}",
                "spec.nodePlugin.nodeSelector",
                "label values"),
            row(
                "spec.nodePlugin.priorityClassName",
                "nodePlugin: {priorityClassName: 'Node Critical'}",
                "spec.nodePlugin.priorityClassName",
                "PriorityClass name"),
            row(
                "spec.nodePlugin.resources",
                "nodePlugin: {resources: {csi-resizer: {limits: {cpu: 1}}}}",
                "spec.nodePlugin.resources",
                "keys must name a container of the node pods"),
            row(
                "spec.nodePlugin.resources",
                "nodePlugin: {resources: {node-driver-registrar: {limits: {cpu: 1}}}}",
                "spec.nodePlugin.resources may name node-driver-registrar",
                "Sidecars"),
            row(
                "spec.nodePlugin.resources",
                "snapshots: {enabled: false}\n"
                    + "nodePlugin: {resources: {csi-snapshotter: {limits: {cpu: 1}}}}",
                "spec.nodePlugin.resources may name csi-snapshotter only with",
                "spec.snapshots.enabled"),
            row(
                "spec.nodePlugin.tolerations",
                "nodePlugin: {tolerations: [{operator: Equal, value: x}]}",
                "spec.nodePlugin.tolerations",
                "each toleration"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {type: Sometimes}}",
                "spec.nodePlugin.updateStrategy",
                "RollingUpdate or OnDelete"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {rollingUpdate: {maxUnavailable: half}}}",
                "spec.nodePlugin.updateStrategy",
                "percentage"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: '0%'}}}",
                "spec.nodePlugin.updateStrategy",
                "maxUnavailable must not be 0"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {rollingUpdate: {maxUnavailable: '0%'}}}",
                "spec.nodePlugin.updateStrategy",
                "maxUnavailable must not be 0"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}}",
                "spec.nodePlugin.updateStrategy",
                "maxSurge must be 0"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {rollingUpdate: {maxSurge: '10%'}}}",
                "spec.nodePlugin.updateStrategy",
                "surge pod"),
            row(
                "spec.nodePlugin.updateStrategy",
                "nodePlugin: {updateStrategy: {type: OnDelete, rollingUpdate: {maxUnavailable: 1}}}",
                "spec.nodePlugin.updateStrategy",
                "rollingUpdate only with RollingUpdate"),
            // pools
            pools(
                "spec.pools[].capacity",
                "[{name: main, path: /p, capacity: 10 GB}]",
                "spec.pools[0].capacity",
                "must be a quantity of bytes"),
            pools(
                "spec.pools[].capacity",
                "[{name: main, path: /p, capacity: '0'}]",
                "spec.pools[0].capacity",
                "must be greater than 0"),
            pools(
                "spec.pools[].capacity",
                "[{name: main, path: /p, capacity: 0Gi}]",
                "spec.pools[0].capacity",
                "must be greater than 0"),
            pools(
                "spec.pools[].fsTypes",
                "[{name: main, path: /p, fsTypes: [xfs, xfs]}]",
                "spec.pools[0].fsTypes",
                "twice"),
            pools(
                "spec.pools[].fsTypes",
                "[{name: main, path: /p, fsTypes: [zfs]}]",
                "spec.pools[0].fsTypes[0]",
                "Unsupported value: \"zfs\""),
            pools(
                "spec.pools[].fsTypes",
                "[{name: main, path: /p, fsTypes: [btrfs]}]",
                "spec.pools[].fsTypes may name btrfs only on a BtrfsSubvolume pool",
                "ext4 or xfs"),
            pools(
                "spec.pools[].fsTypes",
                "[{name: main, path: /p, backend: BtrfsSubvolume, fsTypes: [btrfs, ext4]}]",
                "spec.pools[].fsTypes of a BtrfsSubvolume pool may name btrfs only",
                "subvolumes"),
            pools(
                "spec.pools[].backend",
                "[{name: main, path: /p, backend: Zfs}]",
                "spec.pools[0].backend",
                "Unsupported value: \"Zfs\""),
            pools(
                "spec.pools[].name",
                "[{name: Main_Pool, path: /p}]",
                "spec.pools[0].name",
                "must be lower case letters"),
            pools(
                "spec.pools[].name",
                "[{name: " + "p".repeat(59) + ", path: /p}]",
                "spec.pools[0].name",
                "may not be more than 58"),
            pools(
                "spec.pools[].name",
                "[" + POOL + ", {name: main, path: /var/lib/soko/other}]",
                "spec.pools[].name must be unique",
                ""),
            pools(
                "spec.pools[].overprovisionRatio",
                "[{name: main, path: /p, overprovisionRatio: 0.5}]",
                "spec.pools[0].overprovisionRatio",
                "greater than or equal to 1"),
            pools(
                "spec.pools[].path",
                "[{name: main, path: relative/dir}]",
                "spec.pools[0].path",
                "absolute clean path"),
            pools(
                "spec.pools[].path",
                "[{name: main, path: '/var/lib/soko/./main'}]",
                "spec.pools[0].path",
                "absolute clean path"),
            pools(
                "spec.pools[].path",
                "[{name: main, path: '/p,capacity=1Ti'}]",
                "spec.pools[0].path",
                "without ','"),
            pools("spec.pools[].path", "[{name: main, path: /}]", "spec.pools[0].path", "not '/'"),
            pools(
                "spec.pools[].nodeSelector",
                "[{name: main, path: /p, nodeSelector: {'disk type': nvme}}]",
                "spec.pools[0].nodeSelector",
                "keys must be label keys"),
            pools(
                "spec.pools[].nodeSelector",
                // A ',' would start a new field of the driver's --pool flag.
                "[{name: main, path: /p, nodeSelector: {disk: 'nvme,path=/'}}]",
                "spec.pools[0].nodeSelector",
                "values label values"),
            pools(
                "spec.pools[].nodeSelector",
                "[{name: main, path: /p, nodeSelector: {disk: '" + "n".repeat(64) + "'}}]",
                "spec.pools[0].nodeSelector",
                "may not be more than 63"),
            pools(
                "spec.pools[].requireMountPoint",
                "[{name: main, path: /p, requireMountPoint: 'when-possible'}]",
                "spec.pools[0].requireMountPoint",
                "must be of type boolean"),
            pools(
                "spec.pools[].allowRootFilesystem",
                "[{name: main, path: /p, allowRootFilesystem: 'yes'}]",
                "spec.pools[0].allowRootFilesystem",
                "must be of type boolean"),
            pools(
                "spec.pools[].path",
                "[{name: a, path: /var/lib/soko}, {name: b, path: /var/lib/soko}]",
                "spec.pools[].path must be unique",
                "one host directory"),
            pools(
                "spec.pools[].path",
                "[{name: a, path: /var/lib/soko}, {name: b, path: /var/lib/soko/b}]",
                "spec.pools[].path must not lie inside another pool's path",
                ""),
            pools(
                "spec.pools[].path",
                "[{name: a, path: /dev/pool}]",
                "spec.pools[].path must not be or lie under /csi, /dev",
                "mount"),
            pools(
                "spec.pools[].path",
                "[{name: a, path: /var/lib/kubelet/pods}]",
                "spec.pools[].path must not be or lie under",
                "nodePlugin.kubeletDir"),
            // snapshots
            row(
                "spec.snapshots.className",
                "snapshots: {className: Snap_Class}",
                "spec.snapshots.className",
                "must be a DNS subdomain"),
            row(
                "spec.snapshots.default",
                "snapshots: {default: 'sometimes'}",
                "spec.snapshots.default",
                "must be of type boolean"),
            row(
                "spec.snapshots.default",
                "snapshots: {enabled: false, default: true}",
                "spec.snapshots.default needs spec.snapshots.enabled",
                ""),
            row(
                "spec.snapshots.deletionPolicy",
                "snapshots: {deletionPolicy: Keep}",
                "spec.snapshots.deletionPolicy",
                "Unsupported value: \"Keep\""),
            row(
                "spec.snapshots.enabled",
                "snapshots: {enabled: 'sometimes'}",
                "spec.snapshots.enabled",
                "must be of type boolean"),
            row(
                "spec.snapshots.velero",
                "snapshots: {velero: 'sometimes'}",
                "spec.snapshots.velero",
                "must be of type boolean"),
            row(
                "spec.snapshots.velero",
                "snapshots: {enabled: false, velero: true}",
                "spec.snapshots.velero needs spec.snapshots.enabled",
                ""),
            // storage classes
            classes(
                "spec.storageClasses[].allowVolumeExpansion",
                "[{name: a, pool: main, allowVolumeExpansion: 'sometimes'}]",
                "spec.storageClasses[0].allowVolumeExpansion",
                "must be of type boolean"),
            classes(
                "spec.storageClasses[].default",
                "[{name: a, pool: main, default: 'sometimes'}]",
                "spec.storageClasses[0].default",
                "must be of type boolean"),
            classes(
                "spec.storageClasses[].default",
                "[{name: a, pool: main, default: true}, {name: b, pool: main, default: true}]",
                "at most one of spec.storageClasses[] may be marked default",
                ""),
            classes(
                "spec.storageClasses[].encryption.mode",
                "[{name: a, pool: main, encryption: {mode: dm-crypt}}]",
                "spec.storageClasses[0].encryption.mode",
                "Unsupported value: \"dm-crypt\""),
            classes(
                "spec.storageClasses[].encryption.mode",
                "[{name: a, pool: main, encryption: {keySecret: {name: key}}}]",
                "spec.storageClasses[0].encryption.mode",
                "Required value"),
            classes(
                "spec.storageClasses[].encryption.keySecret.name",
                "[{name: a, pool: main, encryption: {mode: fscrypt, keySecret: {name:"
                    + " 'Key_${pvc.name}'}}}]",
                "spec.storageClasses[0].encryption.keySecret.name",
                "must be a Secret name"),
            // A template the external-provisioner does not resolve.
            classes(
                "spec.storageClasses[].encryption.keySecret.name",
                "[{name: a, pool: main, encryption: {mode: fscrypt, keySecret: {name:"
                    + " '${pvc.uid}-key'}}}]",
                "spec.storageClasses[0].encryption.keySecret.name",
                "with the templates ${pvc.name}, ${pvc.namespace} and ${pv.name} only"),
            // The provisioner resolves only these two in a node-stage Secret's namespace.
            classes(
                "spec.storageClasses[].encryption.keySecret.namespace",
                "[{name: a, pool: main, encryption: {mode: fscrypt, keySecret: {namespace:"
                    + " '${pvc.name}'}}}]",
                "spec.storageClasses[0].encryption.keySecret.namespace",
                "with the templates ${pvc.namespace} and ${pv.name} only"),
            row(
                "spec.storageClasses[].encryption.mode",
                "pools: [{name: main, path: /p, backend: BtrfsSubvolume}]\n"
                    + "storageClasses: [{name: a, pool: main, encryption: {mode: fscrypt}}]",
                "spec.storageClasses[].encryption needs an ImageFile pool",
                "would need dm-crypt"),
            classes(
                "spec.storageClasses[].encryption.mode",
                "[{name: a, pool: main, fsType: xfs, encryption: {mode: fscrypt}}]",
                "spec.storageClasses[].encryption needs fsType ext4 (or unset)",
                "would need dm-crypt"),
            classes(
                "spec.storageClasses[].fsType",
                "[{name: a, pool: main, fsType: zfs}]",
                "spec.storageClasses[0].fsType",
                "Unsupported value: \"zfs\""),
            classes(
                "spec.storageClasses[].fsType",
                "[{name: a, pool: main, fsType: btrfs}]",
                "spec.storageClasses[].fsType btrfs needs a BtrfsSubvolume pool",
                "ext4 or xfs"),
            row(
                "spec.storageClasses[].fsType",
                "pools: [{name: main, path: /p, backend: BtrfsSubvolume}]\n"
                    + "storageClasses: [{name: a, pool: main, fsType: xfs}]",
                "spec.storageClasses[].fsType of a class on a BtrfsSubvolume pool must be btrfs",
                "btrfs volumes only"),
            row(
                "spec.storageClasses[].fsType",
                "pools: [{name: main, path: /p, fsTypes: [ext4]}]\n"
                    + "storageClasses: [{name: a, pool: main, fsType: xfs}]",
                "spec.storageClasses[].fsType must be one of its pool's spec.pools[].fsTypes",
                ""),
            // Unset is ext4 on an ImageFile pool, though the schema has no default for it.
            row(
                "spec.storageClasses[].fsType",
                "pools: [{name: main, path: /p, fsTypes: [xfs]}]\n"
                    + "storageClasses: [{name: a, pool: main}]",
                "spec.storageClasses[].fsType must be one of its pool's spec.pools[].fsTypes",
                "unset: ext4"),
            classes(
                "spec.storageClasses[].mountOptions",
                "[{name: a, pool: main, mountOptions: ['no atime']}]",
                "spec.storageClasses[0].mountOptions",
                "without spaces"),
            classes(
                "spec.storageClasses[].name",
                "[{name: Soko_Class, pool: main}]",
                "spec.storageClasses[0].name",
                "must be a DNS subdomain"),
            classes(
                "spec.storageClasses[].name",
                "[{name: a, pool: main}, {name: a, pool: main}]",
                "spec.storageClasses[].name must be unique",
                ""),
            classes(
                "spec.storageClasses[].pool",
                "[{name: a, pool: nope}]",
                "spec.storageClasses[].pool must name a pool listed in spec.pools",
                ""),
            classes(
                "spec.storageClasses[].reclaimPolicy",
                "[{name: a, pool: main, reclaimPolicy: Recycle}]",
                "spec.storageClasses[0].reclaimPolicy",
                "Unsupported value: \"Recycle\""),
            classes(
                "spec.storageClasses[].volumeBindingMode",
                "[{name: a, pool: main, volumeBindingMode: Later}]",
                "spec.storageClasses[0].volumeBindingMode",
                "Unsupported value: \"Later\""),
            row(
                "spec.uninstallPolicy",
                "uninstallPolicy: Sometimes",
                "spec.uninstallPolicy",
                "Unsupported value: \"Sometimes\""),
            row("spec.pools", "pools: []", "spec.pools", "should have at least 1 items"),
            // nodeLoss
            row(
                "spec.nodeLoss.policy",
                "nodeLoss: {policy: Forget}",
                "spec.nodeLoss.policy",
                "Unsupported value: \"Forget\""),
            row(
                "spec.nodeLoss.deleteAfter",
                "nodeLoss: {policy: Delete, deleteAfter: soon}",
                "spec.nodeLoss.deleteAfter",
                "must be a duration"),
            row(
                "spec.nodeLoss.deleteAfter",
                "nodeLoss: {policy: Delete, deleteAfter: 10s}",
                "spec.nodeLoss.deleteAfter",
                "between 30s and 8760h"));
    return Stream.concat(table, quantityRows()).toList();
  }

  /**
   * Every quantity of every place that takes container resources: a string that is no quantity, a
   * negative integer, a negative string.
   */
  private static Stream<Row> quantityRows() {
    Map<String, String[]> places =
        Map.of(
            "spec.driver.resources",
            new String[] {"driver: {resources: %s}", "spec.driver.resources"},
            "spec.nodePlugin.resources.*",
            new String[] {
              "nodePlugin: {resources: {csi-provisioner: %s}}",
              "spec.nodePlugin.resources.csi-provisioner"
            },
            "spec.controller.resources.*",
            new String[] {
              "controller: {resources: {soko-driver: %s}}", "spec.controller.resources.soko-driver"
            });
    Map<String, String[]> values =
        Map.of(
            "cpu", new String[] {"'2 cores'", "should match"},
            "memory", new String[] {"-1", "greater than or equal to 0"},
            "ephemeral-storage", new String[] {"'-1Gi'", "should match"});
    return places.entrySet().stream()
        .flatMap(
            place ->
                Stream.of("limits", "requests")
                    .flatMap(
                        kind ->
                            values.entrySet().stream()
                                .map(
                                    v -> {
                                      String leaf = "." + kind + "." + v.getKey();
                                      String value =
                                          "{"
                                              + kind
                                              + ": {"
                                              + v.getKey()
                                              + ": "
                                              + v.getValue()[0]
                                              + "}}";
                                      return row(
                                          place.getKey() + leaf,
                                          String.format(place.getValue()[0], value),
                                          place.getValue()[1] + leaf,
                                          v.getValue()[1]);
                                    })));
  }

  private static Row row(String field, String spec, String names, String why) {
    String full =
        spec.startsWith("pools:") || spec.contains("\npools:") ? spec : spec + "\n" + POOLS;
    return new Row(field, full, names, why);
  }

  private static Row pools(String field, String pools, String names, String why) {
    return new Row(field, "pools: " + pools, names, why);
  }

  private static Row classes(String field, String classes, String names, String why) {
    return new Row(field, POOLS + "\nstorageClasses: " + classes, names, why);
  }

  static Stream<Arguments> badValues() {
    return rows().stream().map(Row::args);
  }

  @ParameterizedTest(name = "[{index}] {0}: {1}")
  @MethodSource("badValues")
  void refusedNamingTheField(String field, String specYaml, String names, String why) {
    GenericKubernetesResource sc = storageCluster("invalid", specYaml);
    assertThatThrownBy(() -> cluster.admin.resource(sc).dryRun().create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining(names)
        .hasMessageContaining(why);
  }

  /** The table covers the schema: a field added to the model without a bad-value row fails here. */
  @Test
  void everySchemaFieldHasABadValueRow() throws Exception {
    Set<String> fields = SchemaFields.leaves();
    Set<String> covered = rows().stream().map(Row::field).collect(Collectors.toSet());
    Set<String> missing = new TreeSet<>(fields);
    missing.removeAll(covered);
    missing.removeAll(CANNOT_BE_BAD);
    Set<String> unknown = new TreeSet<>(covered);
    unknown.removeAll(fields);
    // The spec itself (required) and the list of pools itself (at least one pool).
    unknown.removeAll(Set.of("spec", "spec.pools"));
    System.out.printf(
        "schema fields: %d, with a bad-value row: %d, cannot be bad: %d, rows: %d%n",
        fields.size(), fields.size() - missing.size(), CANNOT_BE_BAD.size(), rows().size());
    assertThat(missing).as("spec fields without a bad-value row").isEmpty();
    assertThat(unknown).as("rows naming no field of the schema").isEmpty();
  }

  /** What the rules must not refuse: every container key, integer and string quantities. */
  @Test
  void everyContainerKeyAndQuantityFormIsAccepted() {
    String spec =
        "driver: {registration: Sidecars, extraArgs: ['--allowed-path-root=/mnt/extra'],"
            + " image: 'registry.example:5000/soko/driver:v1@sha256:"
            + "0".repeat(64)
            + "', resources: {requests: {cpu: '0.5', memory: 64Mi}}}\n"
            + "nodePlugin:\n"
            + "  resources:\n"
            + "    soko-driver: {limits: {cpu: 1, memory: 1Gi, ephemeral-storage: 2G}}\n"
            + "    csi-provisioner: {requests: {cpu: 10m, memory: 1e8}}\n"
            + "    csi-snapshotter: {requests: {cpu: '+.5'}}\n"
            + "    node-driver-registrar: {requests: {memory: 32Mi}}\n"
            + "    liveness-probe: {requests: {memory: 32Mi}}\n"
            + "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: '10%',"
            + " maxSurge: 0}}\n"
            + "  tolerations: [{operator: Exists}, {key: a, operator: Equal, value: b, effect:"
            + " NoExecute, tolerationSeconds: 30}]\n"
            + "  nodeSelector: {soko.dev/storage: 'true', zone: ''}\n"
            + "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
            + " {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [x]},"
            + " {key: b, operator: Exists}, {key: c, operator: Gt, values: ['3']}]}]}}}\n"
            + "controller:\n"
            + "  resources:\n"
            + "    soko-driver: {limits: {memory: 256Mi}}\n"
            + "    csi-resizer: {requests: {cpu: 5m}}\n"
            + "    csi-group-snapshotter: {limits: {memory: 64Mi}}\n"
            + "    csi-snapshot-metadata: {limits: {memory: 64Mi}}\n"
            + "    liveness-probe: {requests: {cpu: 5m}}\n"
            + "pools: [{name: a, path: /var/lib/soko/a, capacity: 1Ti}, {name: b, path:"
            + " /var/lib/soko/b2, capacity: '0.5Gi'}]";
    GenericKubernetesResource accepted =
        cluster.admin.resource(storageCluster("every-key", spec)).dryRun().create();
    assertThat(Serialization.asJson(accepted.getAdditionalProperties().get("spec")))
        .contains(
            "\"liveness-probe\"",
            "\"node-driver-registrar\"",
            "\"csi-resizer\"",
            "\"csi-group-snapshotter\"",
            "\"csi-snapshot-metadata\"");
  }

  /**
   * What admission cannot see on every supported version (CEL compares quantities only from
   * Kubernetes 1.29 on) the operator reports in status, naming the field, and applies nothing that
   * the API server would refuse.
   */
  @Test
  void aRequestAboveItsLimitIsAcceptedAndReportedInStatus() {
    StorageCluster sc = Specs.cluster("over-limit");
    sc.getSpec()
        .getNodePlugin()
        .setResources(
            Map.of(
                "csi-provisioner",
                new ResourceRequirementsBuilder()
                    .addToRequests("cpu", new Quantity("2"))
                    .addToLimits("cpu", new Quantity("1"))
                    .build()));
    cluster.admin.resource(sc).create();
    try {
      StorageCluster reported =
          Await.until(
              "InvalidSpec reported",
              () -> cluster.get("over-limit"),
              s ->
                  s.getStatus() != null
                      && s.getStatus().getConditions() != null
                      && s.getStatus().getConditions().stream()
                          .anyMatch(c -> "InvalidSpec".equals(c.getReason())));
      assertThat(StorageClusterLifecycleIT.condition(reported, "Ready").getStatus())
          .isEqualTo("False");
      assertThat(
              reported.getStatus().getConditions().stream()
                  .filter(c -> "InvalidSpec".equals(c.getReason()))
                  .map(Condition::getMessage))
          .allMatch(
              m ->
                  m.contains(
                      "spec.nodePlugin.resources.csi-provisioner.requests.cpu (2) must not exceed"));
      assertThat(cluster.admin.apps().daemonSets().inNamespace("soko-over-limit").list().getItems())
          .isEmpty();
    } finally {
      cluster.admin.resource(sc).delete();
      Await.until("over-limit gone", () -> cluster.get("over-limit") == null, gone -> gone);
    }
  }

  /** metadata.name is no spec field, but it becomes a label value of every owned object. */
  @Test
  void aNameThatCannotBeALabelValueIsRefused() {
    GenericKubernetesResource sc = storageCluster("n".repeat(64), POOLS);
    assertThatThrownBy(() -> cluster.admin.resource(sc).dryRun().create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining("metadata.name must be at most 63 characters");
    cluster.admin.resource(storageCluster("n".repeat(63), POOLS)).dryRun().create();
  }

  @Test
  void validSpecGetsDefaults() {
    GenericKubernetesResource sc =
        storageCluster("valid-defaults", POOLS + "\nstorageClasses: [{name: vd, pool: main}]");
    GenericKubernetesResource created = cluster.admin.resource(sc).dryRun().create();
    String json = Serialization.asJson(created.getAdditionalProperties().get("spec"));
    assertThat(json)
        .contains("\"namespace\":\"soko-system\"")
        .contains("\"uninstallPolicy\":\"RefuseWhileVolumesExist\"")
        .contains("\"volumeBindingMode\":\"WaitForFirstConsumer\"")
        .contains("\"allowVolumeExpansion\":true");
  }

  /**
   * A BtrfsSubvolume pool and a class on it that names no fsType are accepted, and nothing defaults
   * the class's fsType to ext4 (which such a pool cannot serve); a pool that names no backend gets
   * ImageFile.
   */
  @Test
  void aBtrfsSubvolumePoolsClassNeedsNoFsType() {
    GenericKubernetesResource sc =
        storageCluster(
            "btrfs-pool",
            "pools: [{name: fast, path: /var/lib/soko/fast, backend: BtrfsSubvolume, fsTypes:"
                + " [btrfs]}, {name: main, path: /var/lib/soko/main}]\n"
                + "storageClasses: [{name: fast, pool: fast}, {name: fast-btrfs, pool: fast,"
                + " fsType: btrfs}, {name: main, pool: main}]");
    GenericKubernetesResource accepted = cluster.admin.resource(sc).dryRun().create();
    String json = Serialization.asJson(accepted.getAdditionalProperties().get("spec"));
    assertThat(json)
        .contains("\"backend\":\"BtrfsSubvolume\"", "\"backend\":\"ImageFile\"")
        .doesNotContain("\"fsType\":\"ext4\"");
  }

  /**
   * An encrypted class on an ImageFile pool, with fsType ext4 or none, is accepted as written: the
   * schema defaults neither the key Secret nor its fields (the operator's render does), so an older
   * CRD reads back what this one stored.
   */
  @Test
  void anEncryptedClassIsAcceptedWithoutSchemaDefaults() {
    GenericKubernetesResource sc =
        storageCluster(
            "encrypted",
            POOLS
                + "\nstorageClasses: [{name: a, pool: main, encryption: {mode: fscrypt}},"
                + " {name: b, pool: main, fsType: ext4, encryption: {mode: fscrypt, keySecret:"
                + " {name: '${pvc.namespace}.${pvc.name}', namespace: '${pvc.namespace}'}}},"
                + " {name: c, pool: main, encryption: {mode: fscrypt, keySecret: {name:"
                + " '${pv.name}'}}}]");
    GenericKubernetesResource accepted = cluster.admin.resource(sc).dryRun().create();
    String json = Serialization.asJson(accepted.getAdditionalProperties().get("spec"));
    assertThat(json)
        .contains("\"encryption\":{\"mode\":\"fscrypt\"}", "\"name\":\"${pv.name}\"}")
        .doesNotContain("-key");
    assertThat(json.split("\"fsType\"", -1)).as("only class b names a filesystem").hasSize(2);
  }

  /**
   * A pool's backend is immutable (a transition rule: only an update can break it), by its name and
   * by its path: volumes made by one backend are invisible to the other. Other changes to the pool,
   * and a new pool with the other backend, are fine.
   */
  @Test
  void aPoolsBackendCannotChange() {
    String pools = "pools: [{name: main, path: /var/lib/soko/main}]";
    GenericKubernetesResource sc = storageCluster("backend-change", pools);
    cluster.admin.resource(sc).create();
    try {
      assertThatThrownBy(
              () ->
                  updatePools(
                      "backend-change",
                      "[{name: main, path: /var/lib/soko/main," + " backend: BtrfsSubvolume}]"))
          .isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining("spec.pools[].backend cannot change on an existing pool");
      assertThatThrownBy(
              () ->
                  updatePools(
                      "backend-change",
                      "[{name: renamed, path: /var/lib/soko/main," + " backend: BtrfsSubvolume}]"))
          .as("same path, new name")
          .hasMessageContaining("spec.pools[].backend cannot change on an existing pool");
      updatePools("backend-change", "[{name: main, path: /var/lib/soko/main, capacity: 1Ti}]");
      updatePools(
          "backend-change",
          "[{name: main, path: /var/lib/soko/main, backend: ImageFile}, {name: fast, path:"
              + " /var/lib/soko/fast, backend: BtrfsSubvolume}]");
    } finally {
      cluster.admin.resource(sc).delete();
      Await.until("backend-change gone", () -> cluster.get("backend-change") == null, g -> g);
    }
  }

  /** A server-side dry-run merge patch of spec.pools (a list: the patch replaces it whole). */
  private static void updatePools(String name, String poolsYaml) {
    // As a YAML map: a document starting with '[' is parsed as JSON.
    Map<?, ?> pools = Serialization.unmarshal("pools: " + poolsYaml, Map.class);
    String patch = Serialization.asJson(Map.of("spec", pools));
    cluster
        .admin
        .resources(StorageCluster.class)
        .withName(name)
        .dryRun()
        .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
  }

  /** The API server defaults registration inside a given driver object (as the Java model does). */
  @Test
  void metricsOnTheRegistrarsHealthPortIsFineWithBuiltInRegistration() {
    GenericKubernetesResource sc =
        storageCluster("builtin-9809", "driver: {metricsPort: 9809}\n" + POOLS);
    GenericKubernetesResource accepted = cluster.admin.resource(sc).dryRun().create();
    assertThat(Serialization.asJson(accepted.getAdditionalProperties().get("spec")))
        .contains("\"registration\":\"BuiltIn\"", "\"metricsPort\":9809");
  }

  /** Every documented example (docs/examples) must stay valid as the API evolves. */
  @Test
  void documentedExamplesAreAccepted() throws Exception {
    List<Path> examples;
    try (Stream<Path> files = Files.list(Path.of("..", "docs", "examples"))) {
      examples = files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    assertThat(examples).isNotEmpty();
    for (Path example : examples) {
      GenericKubernetesResource sc =
          Serialization.unmarshal(Files.readString(example), GenericKubernetesResource.class);
      GenericKubernetesResource accepted = cluster.admin.resource(sc).dryRun().create();
      assertThat(accepted.getAdditionalProperties().get("spec"))
          .as("server-side dry run of %s", example)
          .isNotNull();
    }
  }

  /** The StorageCluster specs of the chart's values files (helm/soko) must be valid too. */
  @Test
  void chartExamplesAreAccepted() throws Exception {
    List<Path> values;
    try (Stream<Path> files = Files.list(Path.of("..", "helm", "soko", "ci"))) {
      values =
          Stream.concat(files, Stream.of(Path.of("..", "helm", "soko", "values.yaml")))
              .sorted()
              .toList();
    }
    int checked = 0;
    for (Path file : values) {
      Map<?, ?> doc = Serialization.unmarshal(Files.readString(file), Map.class);
      if (doc == null
          || !(doc.get("storageCluster") instanceof Map<?, ?> sc)
          || sc.get("spec") == null) {
        continue;
      }
      String yaml = Serialization.asYaml(sc.get("spec")).replaceFirst("^---\n", "");
      cluster.admin.resource(storageCluster("chart-" + checked, yaml.strip())).dryRun().create();
      checked++;
    }
    assertThat(checked).as("values files with a storageCluster.spec").isGreaterThanOrEqualTo(2);
  }

  /** A StorageCluster of {@code specYaml}; none at all when it is null. */
  private static GenericKubernetesResource storageCluster(String name, String specYaml) {
    String yaml =
        "apiVersion: soko.dev/v1alpha1\nkind: StorageCluster\nmetadata: {name: " + name + "}\n";
    if (specYaml != null) {
      yaml += "spec:\n  " + specYaml.replace("\n", "\n  ") + "\n";
    }
    return Serialization.unmarshal(yaml, GenericKubernetesResource.class);
  }
}
