package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.SelectableField;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.List;

/**
 * What one node's driver reports about its pools: written only by that node's driver (field manager
 * {@code soko-driver}) and read by the operator. Cluster-scoped, like the Node it describes.
 * Bounded: at most {@link #MAX_POOLS} pools, the rest counted in {@code more}.
 *
 * <p>Named {@code <storagecluster>.<node>} and labelled with both ({@link #LABEL_CLUSTER}, {@link
 * #LABEL_NODE}): two StorageClusters (two driver names) may run node plugins on one node, and each
 * has its own report there. Both parts are at most 63 characters (the StorageCluster's name rule,
 * the driver's --node-id, a label value), so the name never exceeds 127 and needs no hashing.
 *
 * <p>A report, not a desired state, so its fields sit at the top level, as in Kubernetes'
 * CSIStorageCapacity (also written by a node's driver side): the driver writes the whole object
 * with one server-side apply request, which also creates it. A {@code status} with a status
 * subresource (which the CRD generator adds for every status type) could not be created through
 * {@code /status}, so the first write would take two requests and the node plugin a second RBAC
 * rule, for nothing: there is no spec whose writers must be kept apart from the status's.
 */
@Group(StorageCluster.GROUP)
@Version(StorageCluster.VERSION)
@ShortNames("stn")
@Plural("storagenodes")
@AdditionalPrinterColumn(
    name = "Node",
    jsonPath = ".node",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".ready",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Refused",
    jsonPath = ".refused",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Volumes",
    jsonPath = ".volumes",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Observed",
    jsonPath = ".observedTime",
    type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
@JsonInclude(JsonInclude.Include.NON_NULL)
// No spec and no status: neither in the schema nor ever sent.
@JsonIgnoreProperties({"spec", "status"})
public class StorageNode extends CustomResource<Void, Void> {
  public static final int MAX_POOLS = 32;
  public static final String LABEL_CLUSTER = "soko.dev/storagecluster";
  public static final String LABEL_NODE = "soko.dev/node";

  @JsonPropertyDescription("The node's name (also in the soko.dev/node label).")
  @Required
  @Size(max = 63)
  @SelectableField
  private String node;

  @JsonPropertyDescription("When the driver took these readings (RFC 3339).")
  private String observedTime;

  @JsonPropertyDescription("The driver's version.")
  @Size(max = 64)
  private String driverVersion;

  @JsonPropertyDescription(
      "Where this node's data port serves (host:port): other nodes' drivers and the controller"
          + " read the node's snapshots there, over mutual TLS. Absent when the node runs no data"
          + " port.")
  // A host name of at most 253 characters, ':' and a port of at most 5 digits.
  @Size(max = 259)
  private String dataEndpoint;

  @JsonPropertyDescription("Pools that are Ready on this node.")
  @Min(0)
  private Integer ready;

  @JsonPropertyDescription("Pools that are Refused on this node.")
  @Min(0)
  private Integer refused;

  @JsonPropertyDescription("Volumes in this node's pools.")
  @Min(0)
  private Integer volumes;

  @JsonPropertyDescription("One entry per configured pool, in configuration order.")
  @Size(max = MAX_POOLS)
  private List<StorageNodePool> pools;

  @JsonPropertyDescription("Configured pools left out of pools.")
  @Min(0)
  private Integer more;

  public String getNode() {
    return node;
  }

  public void setNode(String node) {
    this.node = node;
  }

  public String getObservedTime() {
    return observedTime;
  }

  public void setObservedTime(String observedTime) {
    this.observedTime = observedTime;
  }

  public String getDriverVersion() {
    return driverVersion;
  }

  public void setDriverVersion(String driverVersion) {
    this.driverVersion = driverVersion;
  }

  public String getDataEndpoint() {
    return dataEndpoint;
  }

  public void setDataEndpoint(String dataEndpoint) {
    this.dataEndpoint = dataEndpoint;
  }

  public Integer getReady() {
    return ready;
  }

  public void setReady(Integer ready) {
    this.ready = ready;
  }

  public Integer getRefused() {
    return refused;
  }

  public void setRefused(Integer refused) {
    this.refused = refused;
  }

  public Integer getVolumes() {
    return volumes;
  }

  public void setVolumes(Integer volumes) {
    this.volumes = volumes;
  }

  public List<StorageNodePool> getPools() {
    return pools;
  }

  public void setPools(List<StorageNodePool> pools) {
    this.pools = pools;
  }

  public Integer getMore() {
    return more;
  }

  public void setMore(Integer more) {
    this.more = more;
  }
}
