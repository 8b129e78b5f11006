package dev.soko.operator.model;

import dev.soko.api.v1alpha1.ControllerSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * The controller: driver in controller mode and external-resizer, plus livenessprobe with
 * driver.registration Sidecars ({@link KubeletRegistration}).
 */
final class ControllerDeployment {
  private ControllerDeployment() {}

  /**
   * @param healthMonitor whether to run csi-external-health-monitor-controller (see {@link
   *     DesiredState#CONTROLLER_REPORTS_VOLUME_CONDITION})
   */
  static Deployment build(
      Names n, StorageClusterSpec spec, ResolvedImages images, boolean healthMonitor) {
    ControllerSpec ctrl =
        spec.getController() == null ? new ControllerSpec() : spec.getController();
    List<String> driverArgs = new ArrayList<>();
    driverArgs.add("--mode=controller");
    driverArgs.add("--endpoint=" + Containers.ENDPOINT);
    driverArgs.add("--node-id=$(NODE_NAME)");
    driverArgs.add("--driver-name=" + spec.getDriver().getName());
    driverArgs.add("--log-level=" + spec.getDriver().getLogLevel());
    driverArgs.addAll(KubeletRegistration.controllerDriverArgs(spec));
    ContainerBuilder driver = new ContainerBuilder();
    Containers.metrics(spec, driverArgs, driver);
    if (spec.getDriver().getExtraArgs() != null) {
      driverArgs.addAll(spec.getDriver().getExtraArgs());
    }
    List<Container> containers = new ArrayList<>();
    containers.add(
        driver
            .withName(Component.DRIVER.key())
            .withImage(images.get(Component.DRIVER))
            .withImagePullPolicy(Containers.pullPolicy(spec))
            .withArgs(driverArgs)
            .withEnv(Containers.fieldEnv("NODE_NAME", "spec.nodeName"))
            .withResources(Containers.resources(ctrl, Component.DRIVER, spec))
            .withVolumeMounts(Containers.socketMount())
            .addToPorts(Containers.healthPort())
            .withLivenessProbe(Containers.driverLivenessProbe())
            .build());
    containers.add(
        Containers.sidecar(Component.RESIZER, images, spec, ctrl)
            .withArgs(leaderElected(n, "--timeout=60s", "--handle-volume-inuse-error=false"))
            .build());
    if (healthMonitor) {
      containers.add(
          Containers.sidecar(Component.HEALTH_MONITOR, images, spec, ctrl)
              .withArgs(leaderElected(n, "--enable-node-watcher=false"))
              .build());
    }
    containers.addAll(KubeletRegistration.controllerSidecars(spec, images, ctrl));

    return new DeploymentBuilder()
        .withMetadata(Rbac.meta(n, n.workload(Names.CONTROLLER), n.namespace(), Names.CONTROLLER))
        .withNewSpec()
        .withReplicas(ctrl.getReplicas())
        .withNewSelector()
        .withMatchLabels(n.selector(Names.CONTROLLER))
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(n.labels(Names.CONTROLLER))
        .endMetadata()
        .withNewSpec()
        .withServiceAccountName(n.serviceAccount(Names.CONTROLLER))
        .withPriorityClassName(ctrl.getPriorityClassName())
        .withNodeSelector(ctrl.getNodeSelector())
        .withTolerations(ctrl.getTolerations())
        .withAffinity(ctrl.getAffinity())
        .withImagePullSecrets(Containers.pullSecrets(spec))
        .withContainers(containers)
        .withVolumes(
            new VolumeBuilder()
                .withName(Containers.SOCKET_VOLUME)
                .withNewEmptyDir()
                .endEmptyDir()
                .build())
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  private static List<String> leaderElected(Names n, String... extra) {
    List<String> args = new ArrayList<>();
    args.add("--csi-address=" + Containers.SOCKET);
    args.add("--leader-election=true");
    args.add("--leader-election-namespace=" + n.namespace());
    args.add("--v=2");
    args.addAll(List.of(extra));
    return args;
  }
}
