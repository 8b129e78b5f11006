package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Where an encrypted volume's key Secret is: a name and a namespace, each fixed or made per claim
 * from the templates the external-provisioner resolves for node-stage Secrets. Unset fields have no
 * schema default; {@link #DEFAULT_NAME} and {@link #DEFAULT_NAMESPACE} are the operator's.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KeySecretSpec {
  /**
   * A Secret per claim, beside it: each claim has its own key, and deleting it erases the claim.
   */
  public static final String DEFAULT_NAME = "${pvc.name}-key";

  public static final String DEFAULT_NAMESPACE = "${pvc.namespace}";

  /** Secret name characters and the templates the provisioner fills in for node-stage Secrets. */
  static final String NAME_RULE =
      "self.matches('^([-a-z0-9.]|[$][{](pvc[.]name|pvc[.]namespace|pv[.]name)[}])+$')";

  /** Namespace characters and the two templates the provisioner allows in a namespace. */
  static final String NAMESPACE_RULE =
      "self.matches('^([-a-z0-9]|[$][{](pvc[.]namespace|pv[.]name)[}])+$')";

  @JsonPropertyDescription(
      "Name of the Secret, fixed or with the templates ${pvc.name}, ${pvc.namespace} and"
          + " ${pv.name}; unset: "
          + DEFAULT_NAME
          + ". A fixed name gives every claim of the class the same key.")
  @Size(max = 253)
  @ValidationRule(
      value = NAME_RULE,
      message =
          "must be a Secret name (lower case letters, digits, '-' and '.') with the templates"
              + " ${pvc.name}, ${pvc.namespace} and ${pv.name} only")
  private String name;

  @JsonPropertyDescription(
      "Namespace of the Secret, fixed or with the templates ${pvc.namespace} and ${pv.name};"
          + " unset: "
          + DEFAULT_NAMESPACE
          + ", the claim's own.")
  @Size(max = 63)
  @ValidationRule(
      value = NAMESPACE_RULE,
      message =
          "must be a namespace name (lower case letters, digits and '-') with the templates"
              + " ${pvc.namespace} and ${pv.name} only")
  private String namespace;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getNamespace() {
    return namespace;
  }

  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }
}
