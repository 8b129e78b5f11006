package dev.soko.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * One complete installation of the Soko CSI driver: its driver name, operand namespace, pools, node
 * plugin, controller, sidecar images and storage classes. Cluster-scoped because most of what it
 * owns (CSIDriver, StorageClasses, ClusterRoles) is cluster-scoped.
 */
@Group(StorageCluster.GROUP)
@Version(StorageCluster.VERSION)
@ShortNames("stc")
@Plural("storageclusters")
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Kubernetes",
    jsonPath = ".status.kubernetesVersion",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Nodes-Ready",
    jsonPath = ".status.nodes.ready",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Nodes-Desired",
    jsonPath = ".status.nodes.desired",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Used",
    jsonPath = ".status.capacity.used",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Total",
    jsonPath = ".status.capacity.total",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Registration",
    jsonPath = ".status.registration",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Operator",
    jsonPath = ".status.operatorVersion",
    type = AdditionalPrinterColumn.Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
// The name is the value of the soko.dev/storagecluster label on every owned object.
@ValidationRule(
    value = "self.metadata.name.size() <= 63",
    message =
        "metadata.name must be at most 63 characters: it is a label value on every object the"
            + " StorageCluster owns")
public class StorageCluster extends CustomResource<StorageClusterSpec, StorageClusterStatus> {
  public static final String GROUP = "soko.dev";
  public static final String VERSION = "v1alpha1";

  // No initSpec(): a StorageCluster built only to patch status or add a finalizer must not carry a
  // spec, or server-side apply would send (and validate) an empty one.

  /**
   * Required in the schema, so that the API server refuses a StorageCluster without one (there is
   * nothing to install from it). Such a patch as above is merged into the stored object, which has
   * its spec, before it is validated.
   */
  @Override
  @Required
  public StorageClusterSpec getSpec() {
    return super.getSpec();
  }
}
