package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the operator observed; computed by one class in the operator. No {@code equals}: the
 * operator compares statuses by their serialized form, so a new field can never be left out.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StorageClusterStatus {
  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription(
      "The release of the operator that wrote this status: after an operator upgrade, the new"
          + " operator has reconciled this StorageCluster once it names the new release.")
  private String operatorVersion;

  @JsonPropertyDescription("Ready, Progressing, Degraded and Compatible.")
  private List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("The cluster's Kubernetes version, as used to pick sidecar images.")
  private String kubernetesVersion;

  @JsonPropertyDescription(
      "How the applied driver registers with the kubelet and serves its liveness endpoint"
          + " (spec.driver.registration): BuiltIn or Sidecars.")
  private Registration registration;

  @JsonPropertyDescription("Resolved image per container.")
  private Map<String, String> images = new TreeMap<>();

  @JsonPropertyDescription("Controller Deployment replicas.")
  private ReplicaStatus controller;

  @JsonPropertyDescription("Node plugin pods and CSINode registrations.")
  private NodeStatus nodes;

  @JsonPropertyDescription("Capacity summed over all pools and nodes.")
  private CapacityStatus capacity;

  @JsonPropertyDescription(
      "One entry per spec pool: its nodes by state (Ready, Refused, NotSelected, not reporting)"
          + " and its physical size, use, provisioned bytes and volumes summed over the nodes, from"
          + " the nodes' StorageNode reports.")
  private List<PoolSummaryStatus> poolSummary;

  @JsonPropertyDescription(
      "Capacity and use per pool and node, for at most 10 pool-node pairs: refused pairs first,"
          + " then the fullest (least available); morePools counts the rest (capacity sums over"
          + " all of them).")
  private List<PoolStatus> pools = new ArrayList<>();

  @JsonPropertyDescription("Pool-node pairs beyond those listed in pools.")
  private Integer morePools;

  @JsonPropertyDescription("Objects the operator applied and verified for observedGeneration.")
  private Integer appliedObjects;

  @JsonPropertyDescription(
      "PersistentVolumes bound to deleted Nodes and what spec.nodeLoss does with them; unset when"
          + " there are none.")
  private OrphanedVolumes orphanedVolumes;

  @JsonPropertyDescription(
      "Whether the snapshot metadata sidecar (changed block tracking for backup tools) runs, and"
          + " if not, why.")
  private FeatureState changedBlockTracking;

  public Integer getMorePools() {
    return morePools;
  }

  public void setMorePools(Integer morePools) {
    this.morePools = morePools;
  }

  public Integer getAppliedObjects() {
    return appliedObjects;
  }

  public void setAppliedObjects(Integer appliedObjects) {
    this.appliedObjects = appliedObjects;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public String getOperatorVersion() {
    return operatorVersion;
  }

  public void setOperatorVersion(String operatorVersion) {
    this.operatorVersion = operatorVersion;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }

  public String getKubernetesVersion() {
    return kubernetesVersion;
  }

  public void setKubernetesVersion(String kubernetesVersion) {
    this.kubernetesVersion = kubernetesVersion;
  }

  public Registration getRegistration() {
    return registration;
  }

  public void setRegistration(Registration registration) {
    this.registration = registration;
  }

  public Map<String, String> getImages() {
    return images;
  }

  public void setImages(Map<String, String> images) {
    this.images = images;
  }

  public ReplicaStatus getController() {
    return controller;
  }

  public void setController(ReplicaStatus controller) {
    this.controller = controller;
  }

  public NodeStatus getNodes() {
    return nodes;
  }

  public void setNodes(NodeStatus nodes) {
    this.nodes = nodes;
  }

  public CapacityStatus getCapacity() {
    return capacity;
  }

  public void setCapacity(CapacityStatus capacity) {
    this.capacity = capacity;
  }

  public List<PoolSummaryStatus> getPoolSummary() {
    return poolSummary;
  }

  public void setPoolSummary(List<PoolSummaryStatus> poolSummary) {
    this.poolSummary = poolSummary;
  }

  public List<PoolStatus> getPools() {
    return pools;
  }

  public void setPools(List<PoolStatus> pools) {
    this.pools = pools;
  }

  public OrphanedVolumes getOrphanedVolumes() {
    return orphanedVolumes;
  }

  public void setOrphanedVolumes(OrphanedVolumes orphanedVolumes) {
    this.orphanedVolumes = orphanedVolumes;
  }

  public FeatureState getChangedBlockTracking() {
    return changedBlockTracking;
  }

  public void setChangedBlockTracking(FeatureState changedBlockTracking) {
    this.changedBlockTracking = changedBlockTracking;
  }
}
