/**
 * Schema-only classes: the CRD generator reads them through {@code @SchemaFrom} in place of a
 * standard Kubernetes type whose generated schema validates nothing (resource quantities are bare
 * int-or-string there). The Java model keeps the Kubernetes type, so the operator is unchanged.
 */
package dev.soko.api.v1alpha1.schema;
