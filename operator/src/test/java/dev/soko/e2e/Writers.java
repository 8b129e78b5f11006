package dev.soko.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pods that write and fsync to Soko volumes without pause while something is upgraded under them,
 * and the checks that nothing of what they wrote before, during and after was lost: each filesystem
 * writer appends a numbered line to {@code /data/log} five times a second, the block writer puts
 * the step number in its device's second 4 KiB block; the first failed write ends the container, so
 * a restart means a failed write. Beside that, 1 MiB of random data written before is checked by
 * its sha256.
 */
final class Writers {
  static final String BLOCK = "block";

  private static final String FILESYSTEM_WRITER =
      "set -e; trap 'exit 0' TERM; i=0; while true; do i=$((i+1)); echo $i >> /data/log;"
          + " sync -d /data/log; sleep 0.2; done";

  private static final String BLOCK_WRITER =
      "set -e; trap 'exit 0' TERM; i=0; while true; do i=$((i+1)); echo $i |"
          + " dd of=/dev/xvda bs=4096 seek=1 conv=notrunc,fsync status=none; sleep 0.2; done";

  private final KubernetesClient client;
  private final Workloads apps;
  private final Map<String, String> filesystemClasses;
  private final String blockClass;
  private final Map<String, Map<String, String>> nodeSelectors;
  private final Map<String, String> beforeSums = new LinkedHashMap<>();
  private final Map<String, Long> stepsBefore = new LinkedHashMap<>();

  /**
   * @param filesystemClasses each filesystem writer's name (also its claim's and pod's) and class
   * @param blockClass the class of the block writer's claim
   * @param nodeSelectors a node selector for the writers that need one, by name
   */
  Writers(
      KubernetesClient client,
      Workloads apps,
      Map<String, String> filesystemClasses,
      String blockClass,
      Map<String, Map<String, String>> nodeSelectors) {
    this.client = client;
    this.apps = apps;
    this.filesystemClasses = new LinkedHashMap<>(filesystemClasses);
    this.blockClass = blockClass;
    this.nodeSelectors = Map.copyOf(nodeSelectors);
  }

  /** Every writer's name: the filesystem writers, then {@link #BLOCK}. */
  List<String> names() {
    List<String> names = new ArrayList<>(filesystemClasses.keySet());
    names.add(BLOCK);
    return names;
  }

  List<String> filesystemWriters() {
    return List.copyOf(filesystemClasses.keySet());
  }

  /**
   * Starts every writer, writes the data checked later and records how far each writer has come.
   */
  void start(Duration timeout) {
    for (var writer : filesystemClasses.entrySet()) {
      apps.create(apps.claim(writer.getKey(), writer.getValue(), "320Mi", false));
      apps.create(writerPod(writer.getKey(), false, FILESYSTEM_WRITER));
    }
    apps.create(apps.claim(BLOCK, blockClass, "64Mi", true));
    apps.create(writerPod(BLOCK, true, BLOCK_WRITER));
    for (String writer : names()) {
      apps.awaitRunning(writer, timeout);
    }
    for (String fs : filesystemClasses.keySet()) {
      apps.sh(fs, "head -c 1048576 /dev/urandom > /data/before && sync -d /data/before");
      beforeSums.put(fs, beforeSum(fs));
    }
    apps.sh(
        BLOCK,
        "dd if=/dev/urandom of=/dev/xvda bs=4096 seek=16 count=256 conv=notrunc,fsync status=none");
    beforeSums.put(BLOCK, blockSum());
    for (String writer : names()) {
      stepsBefore.put(writer, steps(writer));
    }
    assertThat(stepsBefore.values()).allMatch(steps -> steps > 0);
  }

  /**
   * No writer restarted (no write failed), every one went on writing since {@link #start}, every
   * filesystem is still mounted with every line in order, and the data from before reads back.
   */
  void assertNothingLostThrough(String what) {
    for (String writer : names()) {
      Pod pod = client.pods().inNamespace(apps.namespace()).withName(writer).get();
      ContainerStatus app = pod.getStatus().getContainerStatuses().get(0);
      assertThat(app.getRestartCount())
          .as(writer + ": no write failed through " + what + ", so no restart")
          .isZero();
      assertThat(app.getState().getRunning()).as(writer + " running").isNotNull();
      assertThat(steps(writer))
          .as(writer + ": the writes went on through " + what)
          .isGreaterThan(stepsBefore.get(writer));
    }
    for (String fs : filesystemClasses.keySet()) {
      assertThat(apps.sh(fs, "grep -c ' /data ' /proc/mounts"))
          .as(fs + " still mounted")
          .isEqualTo("1");
      assertThat(apps.sh(fs, "awk 'NR != $1 {print NR; exit}' /data/log"))
          .as(fs + ": every line written before, during and after, in order, none lost")
          .isEmpty();
      assertThat(beforeSum(fs)).isEqualTo(beforeSums.get(fs));
    }
    assertThat(blockSum())
        .as("the block device's data from before")
        .isEqualTo(beforeSums.get(BLOCK));
  }

  /** The sha256 of the data a filesystem writer wrote before, as the given pod reads it. */
  String beforeSum(String pod) {
    return apps.sh(pod, "sha256sum /data/before | cut -d' ' -f1");
  }

  /** What {@link #beforeSum} gave for a writer when it started. */
  String recordedSum(String writer) {
    return beforeSums.get(writer);
  }

  private PodBuilder writerPod(String name, boolean block, String script) {
    PodBuilder pod = apps.pod(name, name, block, false);
    pod.editSpec().editFirstContainer().withCommand("sh", "-c", script).endContainer().endSpec();
    Map<String, String> selector = nodeSelectors.get(name);
    if (selector != null) {
      pod.editSpec().addToNodeSelector(selector).endSpec();
    }
    return pod;
  }

  /** How many steps the writer has made: lines of its log, or the number on its device. */
  private long steps(String writer) {
    String out =
        writer.equals(BLOCK)
            ? apps.sh(writer, "dd if=/dev/xvda bs=4096 skip=1 count=1 status=none | head -1")
            : apps.sh(writer, "wc -l < /data/log");
    return Long.parseLong(out.trim());
  }

  private String blockSum() {
    return apps.sh(
        BLOCK, "dd if=/dev/xvda bs=4096 skip=16 count=256 status=none | sha256sum | cut -d' ' -f1");
  }
}
