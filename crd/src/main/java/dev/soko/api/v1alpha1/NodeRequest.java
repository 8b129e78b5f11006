package dev.soko.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.Required;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * A change that a controller-side CSI call asks of the node that owns a volume, carried through the
 * API server: the controller-mode driver writes the spec (field manager {@code soko-controller}),
 * the node's driver carries it out and writes the status (field manager {@code soko-driver}), and
 * the controller's call succeeds once the status shows the spec's generation applied. In the
 * operand namespace, labelled with the owning node ({@link #LABEL_NODE}), so each node plugin lists
 * and watches only its own requests; named after the operation and the volume ({@code
 * <operation>-<hash of the volume id>}), so a retried call finds its request again and a new one
 * for the same volume replaces its spec (a new generation) instead of queueing behind it. The
 * PersistentVolume owns it, so it goes when the volume does.
 */
@Group(StorageCluster.GROUP)
@Version(StorageCluster.VERSION)
@ShortNames("nrq")
@Plural("noderequests")
@AdditionalPrinterColumn(
    name = "Node",
    jsonPath = ".spec.node",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Operation",
    jsonPath = ".spec.operation",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Phase",
    jsonPath = ".status.phase",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class NodeRequest extends CustomResource<NodeRequestSpec, NodeRequestStatus>
    implements Namespaced {
  public static final String LABEL_NODE = StorageNode.LABEL_NODE;

  @Override
  @Required
  public NodeRequestSpec getSpec() {
    return super.getSpec();
  }
}
