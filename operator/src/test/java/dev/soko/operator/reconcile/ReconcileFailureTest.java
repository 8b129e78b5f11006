package dev.soko.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

class ReconcileFailureTest {
  private static KubernetesClientException refusal(int code, String message) {
    Status status = new StatusBuilder().withCode(code).withMessage(message).build();
    return new KubernetesClientException(status);
  }

  private static ReconcileFailure applying(int code, String message) {
    return ReconcileFailure.of(
        new ReconcileFailure.ApplyRefused(daemonSet(), refusal(code, message)));
  }

  /** The object whose apply the server refused. */
  private static DaemonSet daemonSet() {
    return new DaemonSetBuilder()
        .withNewMetadata()
        .withName("n")
        .withNamespace("ns")
        .endMetadata()
        .build();
  }

  @Test
  void anAdmissionDenialNamesTheObjectAndKeepsTheServersMessage() {
    ReconcileFailure f =
        applying(
            422,
            "daemonsets.apps \"n\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b'"
                + " denied request: no privileged pods");
    assertThat(f.reason()).isEqualTo("AdmissionDenied");
    assertThat(f.message())
        .startsWith("apply of DaemonSet ns/n refused: ")
        .endsWith("denied request: no privileged pods");
  }

  @Test
  void quotaConflictMissingApiAndPermissionHaveTheirOwnReasons() {
    assertThat(applying(403, "exceeded quota: pods, requested: 1").reason())
        .isEqualTo("QuotaExceeded");
    assertThat(applying(403, "cannot patch resource").reason()).isEqualTo("Forbidden");
    assertThat(applying(409, "the object has been modified").reason()).isEqualTo("Conflict");
    assertThat(applying(404, "the server could not find the requested resource").reason())
        .isEqualTo("ApiMissing");
    assertThat(applying(422, "spec.template: Invalid value").reason()).isEqualTo("Invalid");
    assertThat(applying(500, "etcdserver: request timed out").reason()).isEqualTo("ApplyFailed");
  }

  @Test
  void theFailureIsFoundInsideJosdksWrapper() {
    var ds = daemonSet();
    Exception wrapped =
        new io.javaoperatorsdk.operator.OperatorException(
            new ReconcileFailure.ApplyRefused(ds, refusal(409, "conflict on apply")));
    assertThat(ReconcileFailure.of(wrapped).reason()).isEqualTo("Conflict");
    assertThat(ReconcileFailure.staleStorageCluster(wrapped)).isFalse();
    Exception statusPatch =
        new io.javaoperatorsdk.operator.OperatorException(
            refusal(409, "the object has been modified"));
    assertThat(ReconcileFailure.staleStorageCluster(statusPatch)).isTrue();
  }

  @Test
  void anyOtherExceptionIsAReconcileErrorAndLongMessagesAreBounded() {
    ReconcileFailure f = ReconcileFailure.of(new IllegalStateException("x".repeat(5000)));
    assertThat(f.reason()).isEqualTo("ReconcileError");
    assertThat(f.message().length()).isLessThanOrEqualTo(ReconcileFailure.MAX_MESSAGE + 3);
  }
}
