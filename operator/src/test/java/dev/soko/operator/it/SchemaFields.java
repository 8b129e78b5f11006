package dev.soko.operator.it;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The fields of the generated CRD's spec that a bad value can be written into: scalars, lists of
 * scalars, maps, and the standard Kubernetes types in {@link #UNITS} (one field each: their own
 * sub-fields are the API server's, checked by a rule on the whole). A map of objects is a field
 * (its keys) and its values' fields are listed under {@code .*}.
 */
final class SchemaFields {
  static final Set<String> UNITS =
      Set.of(
          "spec.controller.affinity",
          "spec.nodePlugin.affinity",
          "spec.controller.tolerations",
          "spec.nodePlugin.tolerations",
          "spec.nodePlugin.updateStrategy");

  private SchemaFields() {}

  static JSONSchemaProps specSchema() throws IOException {
    try (InputStream in =
        SchemaFields.class.getResourceAsStream(
            "/META-INF/fabric8/storageclusters.soko.dev-v1.yml")) {
      CustomResourceDefinition crd = Serialization.unmarshal(in, CustomResourceDefinition.class);
      return crd.getSpec()
          .getVersions()
          .get(0)
          .getSchema()
          .getOpenAPIV3Schema()
          .getProperties()
          .get("spec");
    }
  }

  static Set<String> leaves() throws IOException {
    Set<String> out = new TreeSet<>();
    walk(specSchema(), "spec", out);
    return out;
  }

  private static void walk(JSONSchemaProps node, String path, Set<String> out) {
    for (Map.Entry<String, JSONSchemaProps> e : node.getProperties().entrySet()) {
      String field = path + "." + e.getKey();
      JSONSchemaProps p = e.getValue();
      JSONSchemaProps items = p.getItems() == null ? null : p.getItems().getSchema();
      JSONSchemaProps values =
          p.getAdditionalProperties() == null ? null : p.getAdditionalProperties().getSchema();
      if (UNITS.contains(field)) {
        out.add(field);
      } else if (!p.getProperties().isEmpty()) {
        walk(p, field, out);
      } else if (items != null && !items.getProperties().isEmpty()) {
        walk(items, field + "[]", out);
      } else if (values != null && !values.getProperties().isEmpty()) {
        out.add(field);
        walk(values, field + ".*", out);
      } else {
        out.add(field);
      }
    }
  }
}
