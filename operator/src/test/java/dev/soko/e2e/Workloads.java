package dev.soko.e2e;

import dev.soko.operator.harness.Await;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The application side: PVCs and busybox pods in a namespace that stays at the cluster's default
 * Pod Security level (baseline), and commands run inside them through the API server and the
 * kubelet (kubectl exec's path).
 */
final class Workloads {
  static final String MOUNT = "/data";
  static final String DEVICE = "/dev/xvda";

  static final ResourceDefinitionContext VOLUME_SNAPSHOTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withPlural("volumesnapshots")
          .withKind("VolumeSnapshot")
          .withNamespaced(true)
          .build();

  private final KubernetesClient client;
  private final String namespace;
  private final String image;

  Workloads(KubernetesClient client, String namespace, String imageRegistry) {
    this.client = client;
    this.namespace = namespace;
    this.image = imageRegistry == null ? null : imageRegistry + "/busybox:1";
  }

  /** Claims and snapshots only, where no kubelet runs pods (the control-plane tier). */
  static Workloads withoutPods(KubernetesClient client, String namespace) {
    return new Workloads(client, namespace, null);
  }

  String namespace() {
    return namespace;
  }

  /** Creates the namespace (or leaves it as it is), at the cluster's default Pod Security level. */
  void createNamespace() {
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .serverSideApply();
  }

  PersistentVolumeClaim claim(String name, String storageClass, String size, boolean block) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName(storageClass)
        .withAccessModes("ReadWriteOnce")
        .withVolumeMode(block ? "Block" : "Filesystem")
        .withNewResources()
        .addToRequests("storage", new Quantity(size))
        .endResources()
        .endSpec()
        .build();
  }

  /** A pod that mounts PVC {@code claim} at /data (or as /dev/xvda) and sleeps. */
  PodBuilder pod(String name, String claim, boolean block, boolean readOnly) {
    if (image == null) {
      throw new IllegalStateException("these workloads run no pods");
    }
    PodBuilder pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .endMetadata()
            .withNewSpec()
            .withTerminationGracePeriodSeconds(1L)
            .addNewContainer()
            .withName("app")
            .withImage(image)
            .withImagePullPolicy("IfNotPresent")
            .withCommand("sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done")
            .endContainer()
            .addNewVolume()
            .withName("data")
            .withNewPersistentVolumeClaim(claim, readOnly)
            .endVolume()
            .endSpec();
    if (block) {
      pod.editSpec()
          .editFirstContainer()
          .addNewVolumeDevice()
          .withName("data")
          .withDevicePath(DEVICE)
          .endVolumeDevice()
          .endContainer()
          .endSpec();
    } else {
      pod.editSpec()
          .editFirstContainer()
          .addNewVolumeMount()
          .withName("data")
          .withMountPath(MOUNT)
          .endVolumeMount()
          .endContainer()
          .endSpec();
    }
    return pod;
  }

  Pod create(PodBuilder pod) {
    return client.resource(pod.build()).create();
  }

  PersistentVolumeClaim create(PersistentVolumeClaim claim) {
    return client.resource(claim).create();
  }

  /** The claim as the API server has it now, or null. */
  PersistentVolumeClaim claimNamed(String name) {
    return client.persistentVolumeClaims().inNamespace(namespace).withName(name).get();
  }

  PersistentVolumeClaim awaitBound(String claim, Duration timeout) {
    return Await.until(
        "PVC " + claim + " Bound",
        timeout,
        () -> claimNamed(claim),
        c -> "Bound".equals(c.getStatus().getPhase()));
  }

  /** The nodes a claim's volume is pinned to (its PV's node affinity). */
  List<String> nodesOf(PersistentVolumeClaim claim) {
    return client
        .persistentVolumes()
        .withName(claim.getSpec().getVolumeName())
        .get()
        .getSpec()
        .getNodeAffinity()
        .getRequired()
        .getNodeSelectorTerms()
        .get(0)
        .getMatchExpressions()
        .get(0)
        .getValues();
  }

  Pod awaitRunning(String pod, Duration timeout) {
    return Await.until(
        "pod " + pod + " Running",
        timeout,
        () -> client.pods().inNamespace(namespace).withName(pod).get(),
        p -> p != null && "Running".equals(p.getStatus().getPhase()));
  }

  /**
   * Asks for a claim to be {@code size} now (an expansion; the resizer and kubelet do the rest).
   */
  void resize(String claim, String size) {
    client
        .persistentVolumeClaims()
        .inNamespace(namespace)
        .withName(claim)
        .edit(
            c -> {
              c.getSpec().getResources().getRequests().put("storage", new Quantity(size));
              return c;
            });
  }

  /** A PersistentVolume's capacity as the resizer wrote it, e.g. {@code 128Mi}. */
  String volumeCapacity(String pv) {
    return client
        .persistentVolumes()
        .withName(pv)
        .get()
        .getSpec()
        .getCapacity()
        .get("storage")
        .toString();
  }

  /** The claim's capacity in its status, in bytes (0 before it is bound). */
  long capacityBytes(String claim) {
    PersistentVolumeClaim c = claimNamed(claim);
    Quantity q =
        c == null || c.getStatus() == null || c.getStatus().getCapacity() == null
            ? null
            : c.getStatus().getCapacity().get("storage");
    return q == null ? 0 : Quantity.getAmountInBytes(q).longValue();
  }

  /** Takes a VolumeSnapshot of a claim with that class and waits until it is ready to use. */
  GenericKubernetesResource snapshot(
      String name, String claim, String snapshotClass, Duration timeout) {
    GenericKubernetesResource s = new GenericKubernetesResource();
    s.setApiVersion("snapshot.storage.k8s.io/v1");
    s.setKind("VolumeSnapshot");
    s.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    s.setAdditionalProperty(
        "spec",
        Map.of(
            "volumeSnapshotClassName",
            snapshotClass,
            "source",
            Map.of("persistentVolumeClaimName", claim)));
    client.genericKubernetesResources(VOLUME_SNAPSHOTS).inNamespace(namespace).resource(s).create();
    return Await.until(
        "VolumeSnapshot " + name + " readyToUse",
        timeout,
        () ->
            client
                .genericKubernetesResources(VOLUME_SNAPSHOTS)
                .inNamespace(namespace)
                .withName(name)
                .get(),
        snap -> Boolean.TRUE.equals(field(snap, "status", "readyToUse")));
  }

  /**
   * The claim with the annotation the scheduler sets on a WaitForFirstConsumer claim once it has
   * chosen the node, for a cluster without a scheduler placing pods.
   */
  static PersistentVolumeClaim onNode(PersistentVolumeClaim claim, String node) {
    claim.setMetadata(
        new ObjectMetaBuilder(claim.getMetadata())
            .addToAnnotations("volume.kubernetes.io/selected-node", node)
            .build());
    return claim;
  }

  /** A claim of {@code size} restored from a VolumeSnapshot of this namespace. */
  PersistentVolumeClaim restoredClaim(
      String name, String storageClass, String size, String snapshot) {
    PersistentVolumeClaim claim = claim(name, storageClass, size, false);
    claim
        .getSpec()
        .setDataSource(
            new TypedLocalObjectReference("snapshot.storage.k8s.io", "VolumeSnapshot", snapshot));
    return claim;
  }

  void deleteSnapshots() {
    client.genericKubernetesResources(VOLUME_SNAPSHOTS).inNamespace(namespace).delete();
  }

  /**
   * Deletes the namespace's pods, then its claims and snapshots (claims first: a claim restored
   * from a snapshot holds the snapshot until it goes), and waits until the driver has deleted every
   * PersistentVolume of the cluster and every snapshot of the namespace (an uninstall that comes
   * sooner takes the snapshotter away from them, and their finalizers hold the namespace).
   */
  void deleteAllAndAwaitTheVolumesGone(Duration timeout) {
    client.pods().inNamespace(namespace).delete();
    Await.until(
        "the pods of " + namespace + " gone",
        timeout,
        () -> client.pods().inNamespace(namespace).list().getItems(),
        List::isEmpty);
    client.persistentVolumeClaims().inNamespace(namespace).delete();
    deleteSnapshots();
    Await.until(
        "every PV of the driver gone",
        timeout,
        () -> client.persistentVolumes().list().getItems(),
        List::isEmpty);
    Await.until(
        "every VolumeSnapshot of " + namespace + " gone",
        timeout,
        () ->
            client
                .genericKubernetesResources(VOLUME_SNAPSHOTS)
                .inNamespace(namespace)
                .list()
                .getItems(),
        List::isEmpty);
  }

  /** A field of an untyped object by its path, or null when a step is missing. */
  @SuppressWarnings("unchecked")
  static Object field(GenericKubernetesResource r, String... path) {
    Object value = r.getAdditionalProperties();
    for (String p : path) {
      if (!(value instanceof Map)) {
        return null;
      }
      value = ((Map<String, Object>) value).get(p);
    }
    return value;
  }

  /** The first event about the named object with that reason, once there is one. */
  Event awaitEvent(String object, String reason, Duration timeout) {
    return Await.until(
            "a " + reason + " event for " + object,
            timeout,
            () -> events(object, reason),
            list -> !list.isEmpty())
        .get(0);
  }

  /** The events in this namespace about the named object with that reason. */
  List<Event> events(String object, String reason) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> object.equals(e.getInvolvedObject().getName()))
        .filter(e -> reason.equals(e.getReason()))
        .toList();
  }

  /** What `sh -c script` printed in the pod's app container; fails when it exits non-zero. */
  String sh(String pod, String script) {
    Result r = exec(namespace, pod, "app", script);
    if (r.exitCode != 0) {
      throw new AssertionError(
          "in pod " + pod + ": `" + script + "` exited " + r.exitCode + ": " + r.err + r.out);
    }
    return r.out.trim();
  }

  /** Runs {@code sh -c script} in a container and returns its exit code and output. */
  Result exec(String ns, String pod, String container, String script) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (ExecWatch watch =
        client
            .pods()
            .inNamespace(ns)
            .withName(pod)
            .inContainer(container)
            .writingOutput(out)
            .writingError(err)
            .exec("sh", "-c", script)) {
      Integer code = watch.exitCode().get(120, TimeUnit.SECONDS);
      return new Result(
          code == null ? -1 : code,
          out.toString(StandardCharsets.UTF_8),
          err.toString(StandardCharsets.UTF_8));
    } catch (Exception e) {
      throw new AssertionError("exec in " + ns + "/" + pod + " failed: " + e, e);
    }
  }

  record Result(int exitCode, String out, String err) {}
}
