package dev.soko.e2e;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * When a test fails, everything needed to see why goes into {@code target/e2e-report/<test>/}: the
 * logs of every cluster process (control plane, containerd, kubelet), the logs of every container
 * of every pod (the operator and each container of the node plugin included, with their previous
 * run), and {@code kubectl describe} of the objects that matter.
 */
final class FailureReport implements TestWatcher {
  private static final List<String> DESCRIBED =
      List.of(
          "nodes",
          "csinodes",
          "storageclusters",
          "storagenodes",
          "daemonsets",
          "deployments",
          "pods",
          "persistentvolumeclaims",
          "persistentvolumes",
          "volumesnapshots",
          "volumesnapshotcontents",
          "csistoragecapacities",
          "storageclasses",
          "csidrivers",
          "namespaces");

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    Path dir =
        Path.of("target", "e2e-report", context.getRequiredTestMethod().getName()).toAbsolutePath();
    try {
      Files.createDirectories(dir);
      LocalCluster cluster = LocalCluster.fromEnvironment();
      copyClusterLogs(cluster, dir.resolve("cluster"));
      try (KubernetesClient client = cluster.client()) {
        podLogs(client, dir.resolve("pods"));
      }
      Path kubectl = cluster.helm.resolveSibling("kubectl");
      for (String kind : DESCRIBED) {
        String out;
        try {
          out =
              LocalCluster.run(
                  List.of(
                      kubectl.toString(),
                      "--kubeconfig",
                      cluster.kubeconfig.toString(),
                      "describe",
                      kind,
                      "-A"),
                  60);
        } catch (AssertionError e) {
          out = e.getMessage();
        }
        Files.writeString(dir.resolve("describe-" + kind + ".txt"), out);
      }
      System.err.println("e2e: failure report in " + dir);
    } catch (Exception e) {
      System.err.println("e2e: could not write the failure report to " + dir + ": " + e);
    }
  }

  private static void copyClusterLogs(LocalCluster cluster, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> logs = Files.list(cluster.logs())) {
      for (Path log : logs.toList()) {
        Files.copy(log, to.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  private static void podLogs(KubernetesClient client, Path to) throws IOException {
    Files.createDirectories(to);
    for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
      String ns = pod.getMetadata().getNamespace();
      String name = pod.getMetadata().getName();
      for (Container c : pod.getSpec().getContainers()) {
        for (boolean previous : new boolean[] {false, true}) {
          String log;
          try {
            var container = client.pods().inNamespace(ns).withName(name).inContainer(c.getName());
            log = previous ? container.terminated().getLog() : container.getLog();
          } catch (RuntimeException e) {
            continue; // no previous run, or the pod never started
          }
          String file =
              ns + "_" + name + "_" + c.getName() + (previous ? ".previous" : "") + ".log";
          Files.writeString(to.resolve(file), log == null ? "" : log);
        }
      }
    }
  }
}
