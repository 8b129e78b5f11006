package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;

/** Capacity as quantities (e.g. 120Gi), for printer columns. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CapacityStatus(String total, String used) {}
