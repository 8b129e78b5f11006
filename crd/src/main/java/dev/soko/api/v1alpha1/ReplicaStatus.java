package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Desired and ready replicas of a workload. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReplicaStatus(Integer desired, Integer ready) {}
