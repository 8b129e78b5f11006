package dev.soko.operator.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import org.junit.jupiter.api.Test;

class RedactionTest {
  private static final ContainerBuilder CONTAINER =
      new ContainerBuilder()
          .withName("soko-driver")
          .addNewEnv()
          .withName("PASSWORD")
          .withValue("hunter2")
          .endEnv()
          .addNewEnv()
          .withName("NODE")
          .withNewValueFrom()
          .withNewFieldRef()
          .withFieldPath("spec.nodeName")
          .endFieldRef()
          .endValueFrom()
          .endEnv();

  @Test
  void podEnvValuesOfEveryContainerListAreRedactedAndReferencesStay() {
    String yaml =
        Redaction.yaml(
            new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubectl").build())
                .addToAnnotations(Redaction.LAST_APPLIED, "{\"secret\":\"hunter2\"}")
                .addToAnnotations("kept", "yes")
                .endMetadata()
                .withNewSpec()
                .withContainers(CONTAINER.build())
                .withInitContainers(CONTAINER.build())
                .endSpec()
                .build());
    assertThat(yaml)
        .doesNotContain("hunter2", "managedFields", "kubectl", Redaction.LAST_APPLIED)
        .contains("kept: \"yes\"", "fieldPath: \"spec.nodeName\"", "PASSWORD");
    assertThat(yaml.split("<redacted>", -1)).hasSize(3);
  }

  @Test
  void podTemplatesAreRedacted() {
    String yaml =
        Redaction.yaml(
            new DaemonSetBuilder()
                .withNewMetadata()
                .withName("d")
                .endMetadata()
                .withNewSpec()
                .withNewTemplate()
                .withNewSpec()
                .withContainers(CONTAINER.build())
                .endSpec()
                .endTemplate()
                .endSpec()
                .build());
    assertThat(yaml).doesNotContain("hunter2").contains("<redacted>", "spec.nodeName");
  }

  @Test
  void aServiceAccountLosesItsSecretsList() {
    String yaml =
        Redaction.yaml(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName("sa")
                .endMetadata()
                .addNewSecret()
                .withName("sa-token-abcde")
                .endSecret()
                .build());
    assertThat(yaml).contains("name: \"sa\"").doesNotContain("sa-token-abcde", "secrets");
  }

  @Test
  void theObjectItselfIsLeftAsItWas() {
    var pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .endMetadata()
            .withNewSpec()
            .withContainers(CONTAINER.build())
            .endSpec()
            .build();
    Redaction.yaml(pod);
    assertThat(pod.getSpec().getContainers().get(0).getEnv().get(0).getValue())
        .isEqualTo("hunter2");
  }

  @Test
  void aSecretIsRefused() {
    assertThatThrownBy(
            () ->
                Redaction.yaml(
                    new SecretBuilder()
                        .withNewMetadata()
                        .withName("s")
                        .endMetadata()
                        .addToStringData("k", "v")
                        .build()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
