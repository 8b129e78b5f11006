package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** What the operator observed; computed by one class in the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StorageClusterStatus {
  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

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

  @JsonPropertyDescription("Capacity and use per pool and node.")
  private List<PoolStatus> pools = new ArrayList<>();

  @JsonPropertyDescription("Objects the operator applied and verified for observedGeneration.")
  private Integer appliedObjects;

  @JsonPropertyDescription(
      "PersistentVolumes bound to deleted Nodes and what spec.nodeLoss does with them; unset when"
          + " there are none.")
  private OrphanedVolumes orphanedVolumes;

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

  public List<PoolStatus> getPools() {
    return pools;
  }

  public void setPools(List<PoolStatus> pools) {
    this.pools = pools;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof StorageClusterStatus s)) {
      return false;
    }
    return Objects.equals(observedGeneration, s.observedGeneration)
        && Objects.equals(conditions, s.conditions)
        && Objects.equals(kubernetesVersion, s.kubernetesVersion)
        && Objects.equals(registration, s.registration)
        && Objects.equals(images, s.images)
        && Objects.equals(controller, s.controller)
        && Objects.equals(nodes, s.nodes)
        && Objects.equals(capacity, s.capacity)
        && Objects.equals(pools, s.pools)
        && Objects.equals(appliedObjects, s.appliedObjects)
        && Objects.equals(orphanedVolumes, s.orphanedVolumes);
  }

  @Override
  public int hashCode() {
    return Objects.hash(observedGeneration, kubernetesVersion, images, nodes);
  }

  public OrphanedVolumes getOrphanedVolumes() {
    return orphanedVolumes;
  }

  public void setOrphanedVolumes(OrphanedVolumes orphanedVolumes) {
    this.orphanedVolumes = orphanedVolumes;
  }
}
