package dev.soko.operator.cli;

import dev.soko.api.v1alpha1.StorageCluster;
import dev.soko.operator.model.ClusterFacts;
import dev.soko.operator.model.DataTls;
import dev.soko.operator.model.DesiredState;
import dev.soko.operator.model.KubernetesVersion;
import dev.soko.operator.model.Names;
import dev.soko.operator.model.SnapshotMetadata;
import dev.soko.operator.model.SpecValidator;
import dev.soko.operator.model.VersionsTable;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Prints, offline, every object the operator would apply for a StorageCluster file. */
@Command(
    name = "render",
    mixinStandardHelpOptions = true,
    description =
        "Print every object the operator would apply, as YAML, without a cluster; the Secrets"
            + " and objects that hold keys or the CA are issued at run time and not printed.")
public final class RenderCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "FILE", description = "StorageCluster YAML ('-' = stdin)")
  String file;

  @Option(
      names = "--kubernetes-version",
      required = true,
      description = "Target cluster version, e.g. 1.34 or v1.31.4")
  String kubernetesVersion;

  @Option(
      names = "--image-registry",
      defaultValue = "${env:SOKO_IMAGE_REGISTRY}",
      description =
          "The operator's default image registry, as with run (default: $SOKO_IMAGE_REGISTRY)")
  String imageRegistry;

  @Override
  public Integer call() throws IOException {
    return render(file, kubernetesVersion, imageRegistry, System.out, System.err);
  }

  static int render(
      String file, String version, String imageRegistry, PrintStream out, PrintStream err)
      throws IOException {
    KubernetesVersion kv;
    try {
      kv = KubernetesVersion.parse(version);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return 2;
    }
    StorageCluster sc;
    try (InputStream in = "-".equals(file) ? System.in : Files.newInputStream(Path.of(file))) {
      sc = Serialization.unmarshal(in, StorageCluster.class);
    } catch (RuntimeException e) {
      err.println("error: " + file + " is not a StorageCluster: " + e.getMessage());
      return 2;
    }
    if (sc == null || sc.getMetadata() == null || sc.getMetadata().getName() == null) {
      err.println("error: " + file + " has no metadata.name");
      return 2;
    }
    List<String> problems = SpecValidator.problems(sc.getSpec());
    if (!problems.isEmpty()) {
      problems.forEach(p -> err.println("error: " + p));
      return 2;
    }
    VersionsTable table = VersionsTable.load().withDefaultRegistry(imageRegistry);
    if (!table.supports(kv)) {
      err.println(
          "warning: Kubernetes "
              + kv.minorVersion()
              + " is older than the oldest supported 1."
              + table.oldestSupportedMinor()
              + "; rendering the oldest image set");
    }
    DesiredState desired = DesiredState.of(sc, table, ClusterFacts.offline(kv));
    for (HasMetadata object : desired.all()) {
      out.print(Serialization.asYaml(object));
    }
    err.println(leftOut(desired, sc.getSpec().getDriver().getName()));
    return 0;
  }

  /**
   * What the render does not print: the objects that hold keys or the CA, which the operator issues
   * at run time (docs/operations.md, "The data path's certificates").
   */
  static String leftOut(DesiredState desired, String driver) {
    Names n = desired.names();
    String note =
        "note: not printed, issued at run time by the operator's CA: Secrets "
            + String.join(", ", DataTls.secretNames(n));
    if (desired.changedBlockTracking().runs()) {
      note +=
          ", "
              + SnapshotMetadata.secretName(n)
              + " and the SnapshotMetadataService "
              + driver
              + " (its caCert)";
    }
    return note;
  }
}
