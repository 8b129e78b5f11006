package dev.soko.operator.model;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a rendered container sees once the kubelet runs it on a node: its arguments with {@code
 * $(VAR)} expanded from its environment, and which volume (host directory or pod volume) a path in
 * it lies on. Lets a test check what one container says to another through flags and shared
 * volumes.
 */
final class PodEnvironment {
  /** What the downward API gives a pod as status.podIP here. */
  static final String POD_IP = "10.0.0.7";

  private static final Pattern REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

  private PodEnvironment() {}

  /**
   * The container's args as the kubelet passes them: {@code $(VAR)} replaced by the variable's
   * value (field references resolved for a pod on {@code node}); an unknown one stays as written.
   */
  static List<String> expand(Container container, String node) {
    Map<String, String> env = new HashMap<>();
    for (EnvVar var : container.getEnv()) {
      if (var.getValue() != null) {
        env.put(var.getName(), var.getValue());
      } else if (var.getValueFrom() != null && var.getValueFrom().getFieldRef() != null) {
        String field = var.getValueFrom().getFieldRef().getFieldPath();
        env.put(
            var.getName(),
            switch (field) {
              case "spec.nodeName" -> node;
              case "metadata.name" -> "pod-" + node;
              case "metadata.namespace" -> "namespace";
              case "status.podIP" -> POD_IP;
              default -> throw new AssertionError("no value for field " + field);
            });
      }
    }
    return container.getArgs().stream()
        .map(
            arg -> {
              Matcher m = REFERENCE.matcher(arg);
              StringBuilder out = new StringBuilder();
              while (m.find()) {
                String value = env.getOrDefault(m.group(1), m.group());
                m.appendReplacement(out, Matcher.quoteReplacement(value));
              }
              return m.appendTail(out).toString();
            })
        .toList();
  }

  /** A directory without '//', '.' or a trailing '/'; the default kubelet directory for null. */
  static String clean(String dir) {
    return NodeDaemonSet.canonicalDir(dir);
  }

  /** The value of a container's {@code --csi-address}: the CSI socket it dials. */
  static String socket(PodSpec pod, String container) {
    return Fixtures.container(pod, container).getArgs().stream()
        .filter(a -> a.startsWith("--csi-address="))
        .map(a -> a.substring("--csi-address=".length()))
        .findFirst()
        .orElseThrow(() -> new AssertionError(container + " has no --csi-address"));
  }

  /**
   * Where {@code path} of the container lies: {@code host:/dir/...} on a hostPath volume, {@code
   * volume:name/...} on another pod volume (two containers that both see one socket there share
   * it).
   */
  static String volumePathOf(PodSpec pod, Container container, String path) {
    VolumeMount mount =
        container.getVolumeMounts().stream()
            .filter(m -> path.equals(m.getMountPath()) || path.startsWith(m.getMountPath() + "/"))
            .max((a, b) -> a.getMountPath().length() - b.getMountPath().length())
            .orElseThrow(() -> new AssertionError(container.getName() + " does not mount " + path));
    String rest = path.substring(mount.getMountPath().length());
    Volume volume = volume(pod, mount.getName());
    return volume.getHostPath() != null
        ? "host:" + volume.getHostPath().getPath() + rest
        : "volume:" + volume.getName() + rest;
  }

  /** The host path behind {@code path} of the container, which must lie on a hostPath volume. */
  static String hostPathOf(PodSpec pod, Container container, String path) {
    String where = volumePathOf(pod, container, path);
    if (!where.startsWith("host:")) {
      throw new AssertionError(path + " of " + container.getName() + " is not on the host");
    }
    return where.substring("host:".length());
  }

  /** Where in the container the host directory {@code hostPath} is mounted. */
  static String mountOf(PodSpec pod, Container container, String hostPath) {
    return container.getVolumeMounts().stream()
        .filter(m -> hostPath.equals(hostPathOfVolume(pod, m.getName())))
        .map(VolumeMount::getMountPath)
        .findFirst()
        .orElseThrow(
            () -> new AssertionError(container.getName() + " does not mount host " + hostPath));
  }

  /** {@code 0.0.0.0:PORT}, PORT the one the container's liveness probe asks. */
  static String probedAddress(Container container) {
    IntOrString port = container.getLivenessProbe().getHttpGet().getPort();
    int number =
        port.getIntVal() != null
            ? port.getIntVal()
            : container.getPorts().stream()
                .filter(p -> port.getStrVal().equals(p.getName()))
                .map(ContainerPort::getContainerPort)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no port " + port.getStrVal()));
    return "0.0.0.0:" + number;
  }

  private static String hostPathOfVolume(PodSpec pod, String name) {
    Volume volume = volume(pod, name);
    return volume.getHostPath() == null ? null : volume.getHostPath().getPath();
  }

  private static Volume volume(PodSpec pod, String name) {
    return pod.getVolumes().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name));
  }
}
