package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.soko.api.v1alpha1.schema.DeepMerge;
import io.fabric8.crdv2.generator.v1.SchemaCustomizer;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;

/** Scheduling and resources shared by the node plugin and the controller. */
@JsonInclude(JsonInclude.Include.NON_NULL)
/*
 * Bounds for the cost of the CEL rules on the embedded Kubernetes types (see DeepMerge). Kubernetes
 * itself bounds none of these lists; the limits are far above what a CSI driver's pods need.
 */
@SchemaCustomizer(
    value = DeepMerge.class,
    input =
        "{properties: {"
            + "nodeSelector: {maxProperties: 64, additionalProperties: {maxLength: 63}},"
            + " tolerations: {items: {properties: {key: {maxLength: 317}, value: {maxLength: 63},"
            + " operator: {maxLength: 16}, effect: {maxLength: 16}}}},"
            + " affinity: {properties: {nodeAffinity: {properties:"
            + " {requiredDuringSchedulingIgnoredDuringExecution: {properties: {nodeSelectorTerms:"
            + " {maxItems: 16, items: {properties: {matchExpressions: {maxItems: 16, items:"
            + " {properties: {key: {maxLength: 317}, operator: {maxLength: 16}, values: {maxItems:"
            + " 64}}}}}}}}}}}}}}}")
public abstract class Placement {
  @JsonPropertyDescription("Node labels the pods must match.")
  @ValidationRule(
      value =
          "self.all(k, k.size() <= 317 && k.matches('"
              + Validation.LABEL_KEY
              + "') && self[k].size() <= 63 && self[k].matches('"
              + Validation.LABEL_VALUE
              + "'))",
      message = "keys must be label keys and values label values (at most 63 characters each)")
  private Map<String, String> nodeSelector;

  @JsonPropertyDescription("Tolerations of the pods.")
  @Size(max = 32)
  @ValidationRule(
      value =
          "self.all(t, (!has(t.operator) || t.operator in ['Exists', 'Equal'])"
              + " && (!has(t.effect) || t.effect in ['', 'NoSchedule', 'PreferNoSchedule',"
              + " 'NoExecute'])"
              + " && (!has(t.operator) || t.operator != 'Exists' || !has(t.value) || t.value == '')"
              + " && (has(t.key) && t.key != '' || has(t.operator) && t.operator == 'Exists')"
              + " && (!has(t.key) || t.key == '' || t.key.size() <= 317 && t.key.matches('"
              + Validation.LABEL_KEY
              + "'))"
              + " && (!has(t.value) || t.value.size() <= 63 && t.value.matches('"
              + Validation.LABEL_VALUE
              + "'))"
              + " && (!has(t.tolerationSeconds) || has(t.effect) && t.effect == 'NoExecute'))",
      message =
          "each toleration needs operator Exists or Equal, effect NoSchedule, PreferNoSchedule or"
              + " NoExecute, a label key unless Exists, a label value and none with Exists, and"
              + " tolerationSeconds only with NoExecute")
  private List<Toleration> tolerations;

  @JsonPropertyDescription("Affinity of the pods.")
  @ValidationRule(
      value =
          "!has(self.nodeAffinity) ||"
              + " !has(self.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) ||"
              + " self.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
              + ".all(t, !has(t.matchExpressions) || t.matchExpressions.all(e,"
              + " e.operator in ['In', 'NotIn'] && has(e.values) && e.values.size() > 0"
              + " || e.operator in ['Exists', 'DoesNotExist'] && (!has(e.values) ||"
              + " e.values.size() == 0)"
              + " || e.operator in ['Gt', 'Lt'] && has(e.values) && e.values.size() == 1))",
      message =
          "nodeAffinity match expressions need operator In or NotIn with values, Exists or"
              + " DoesNotExist without, or Gt or Lt with one value")
  private Affinity affinity;

  @JsonPropertyDescription(
      "PriorityClass of the pods. It must exist when the pods are created; the API server refuses"
          + " the pods, not this object, when it does not.")
  @Size(max = 253)
  @ValidationRule(
      value = Validation.DNS_SUBDOMAIN_RULE,
      message = "must be a PriorityClass name (lower case letters, digits, '-' and '.')")
  private String priorityClassName;

  public Map<String, String> getNodeSelector() {
    return nodeSelector;
  }

  public void setNodeSelector(Map<String, String> nodeSelector) {
    this.nodeSelector = nodeSelector;
  }

  public List<Toleration> getTolerations() {
    return tolerations;
  }

  public void setTolerations(List<Toleration> tolerations) {
    this.tolerations = tolerations;
  }

  public Affinity getAffinity() {
    return affinity;
  }

  public void setAffinity(Affinity affinity) {
    this.affinity = affinity;
  }

  public String getPriorityClassName() {
    return priorityClassName;
  }

  public void setPriorityClassName(String priorityClassName) {
    this.priorityClassName = priorityClassName;
  }

  /**
   * Resources per container, keyed by container name. Declared by each subclass: the containers,
   * and so the keys the schema accepts, differ between the node plugin and the controller.
   */
  public abstract Map<String, ResourceRequirements> getResources();

  public abstract void setResources(Map<String, ResourceRequirements> resources);
}
