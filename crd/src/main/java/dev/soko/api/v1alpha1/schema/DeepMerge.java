package dev.soko.api.v1alpha1.schema;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Iterator;
import java.util.Map;

/**
 * A schema customizer that merges a JSON object into the generated schema of a class, deeply:
 * {@code {properties: {tags: {items: {maxLength: 63}}}}} adds one bound and keeps the rest. (The
 * generator's own MergePatchCustomizer replaces each named property whole.) It exists for the
 * bounds the generator's annotations cannot express (items of a list of strings, values of a map,
 * fields of an embedded Kubernetes type, int-or-string values) and that the API server needs to
 * estimate the cost of CEL rules. A patch naming a property the schema lacks is an error, so a
 * renamed field cannot leave a bound behind silently.
 *
 * <p>Runs inside the CRD generator at build time only.
 */
public class DeepMerge implements SchemaCustomizer.Customizer {
  /** Relaxed JSON, readable inside an annotation: {properties: {a: {maxLength: 1}}}. */
  private static final JsonMapper PATCH_READER =
      JsonMapper.builder()
          .enable(JsonReadFeature.ALLOW_UNQUOTED_FIELD_NAMES, JsonReadFeature.ALLOW_SINGLE_QUOTES)
          .build();

  @Override
  public JSONSchemaProps apply(
      JSONSchemaProps schema, String input, KubernetesSerialization serialization) {
    ObjectNode target = serialization.convertValue(schema, ObjectNode.class);
    JsonNode patch;
    try {
      patch = PATCH_READER.readTree(input);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("schema customizer: bad patch " + input, e);
    }
    merge(target, patch, "");
    return serialization.convertValue(target, JSONSchemaProps.class);
  }

  private static void merge(ObjectNode target, JsonNode patch, String path) {
    Iterator<Map.Entry<String, JsonNode>> fields = patch.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      String where = path + "/" + field.getKey();
      JsonNode existing = target.get(field.getKey());
      if (field.getValue().isObject()) {
        if (existing == null && path.endsWith("/properties")) {
          throw new IllegalArgumentException("schema customizer: no property at " + where);
        }
        ObjectNode child = existing instanceof ObjectNode o ? o : target.putObject(field.getKey());
        merge(child, field.getValue(), where);
      } else {
        target.set(field.getKey(), field.getValue());
      }
    }
  }
}
