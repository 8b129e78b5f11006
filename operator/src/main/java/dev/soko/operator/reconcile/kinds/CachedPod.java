package dev.soko.operator.reconcile.kinds;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import java.util.List;

/**
 * What the Pod informer keeps of a node plugin pod: the parts {@code status.NodeReadiness} and the
 * workload filter read (identity, labels, deletion, node, conditions, container states), nothing
 * else. There is one such pod per node, and a whole one (its spec and managedFields, hundreds of
 * nested maps) costs tens of kilobytes of heap: at 1,000 nodes the full copies filled the
 * operator's heap, and every reconcile then paid a full GC of hundreds of milliseconds.
 */
public final class CachedPod {
  private CachedPod() {}

  public static Pod of(Pod pod) {
    PodBuilder slim = new PodBuilder().withMetadata(meta(pod.getMetadata()));
    if (pod.getSpec() != null && pod.getSpec().getNodeName() != null) {
      slim.withNewSpec().withNodeName(pod.getSpec().getNodeName()).endSpec();
    }
    if (pod.getStatus() != null) {
      slim.withStatus(status(pod.getStatus()));
    }
    return slim.build();
  }

  private static ObjectMeta meta(ObjectMeta m) {
    return new ObjectMetaBuilder()
        .withName(m.getName())
        .withNamespace(m.getNamespace())
        .withUid(m.getUid())
        .withResourceVersion(m.getResourceVersion())
        .withLabels(m.getLabels())
        .withDeletionTimestamp(m.getDeletionTimestamp())
        .build();
  }

  private static PodStatus status(PodStatus s) {
    return new PodStatusBuilder()
        .withPhase(s.getPhase())
        .withConditions(s.getConditions())
        .withInitContainerStatuses(containers(s.getInitContainerStatuses()))
        .withContainerStatuses(containers(s.getContainerStatuses()))
        .build();
  }

  private static List<ContainerStatus> containers(List<ContainerStatus> statuses) {
    if (statuses == null) {
      return null;
    }
    return statuses.stream()
        .map(
            c ->
                new ContainerStatusBuilder()
                    .withName(c.getName())
                    .withReady(c.getReady())
                    .withStarted(c.getStarted())
                    .withRestartCount(c.getRestartCount())
                    .withState(c.getState())
                    .build())
        .toList();
  }
}
