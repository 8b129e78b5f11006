package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One pool on one node, from the CSIStorageCapacity objects the node's provisioner publishes.
 * {@code total} is the pool's configured capacity when known; {@code available} what is left.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PoolStatus(String node, String pool, String total, String available) {}
