package dev.soko.driver.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.soko.driver.config.DriverConfig;
import dev.soko.driver.config.KubeletRegistration;
import dev.soko.driver.config.PoolConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class DriverCommandTest {
  private final AtomicReference<DriverConfig> launched = new AtomicReference<>();
  private final StringWriter err = new StringWriter();
  private final StringWriter out = new StringWriter();

  private int run(String... args) {
    return DriverCommand.execute(
        config -> {
          launched.set(config);
          return 0;
        },
        new PrintWriter(out),
        new PrintWriter(err),
        args);
  }

  @Test
  void parsesEveryFlag() {
    int exit =
        run(
            "--endpoint=unix:///run/soko/csi.sock",
            "--node-id=worker-1",
            "--driver-name=csi.example.com",
            "--mode=node",
            "--pool=name=fast,path=/srv/fast,capacity=10Gi,overprovision=2.5,fs=xfs:ext4",
            "--pool",
            "name=slow,path=/srv/slow",
            "--allowed-path-root=/var/lib/kubelet",
            "--allowed-path-root=/tmp/k",
            "--max-volumes-per-node=64",
            "--metrics-address=127.0.0.1:9809",
            "--health-address=0.0.0.0:9808",
            "--kubelet-registration-path=/var/lib/kubelet/plugins/csi.example.com/csi.sock",
            "--registration-dir",
            "/var/lib/kubelet/plugins_registry",
            "--label-imported-snapshots=true",
            "--data-address=10.0.0.7:9810",
            "--data-tls-dir=/etc/soko/data-tls",
            "--log-level=debug");
    assertThat(exit).isZero();
    DriverConfig config = launched.get();
    assertThat(config.logLevel()).isEqualTo("debug");
    assertThat(config.endpoint()).isEqualTo("unix:///run/soko/csi.sock");
    assertThat(config.nodeId()).isEqualTo("worker-1");
    assertThat(config.driverName()).isEqualTo("csi.example.com");
    assertThat(config.mode()).isEqualTo(DriverConfig.Mode.NODE);
    assertThat(config.pools()).hasSize(2);
    assertThat(config.pools().get(0).name()).isEqualTo("fast");
    assertThat(config.pools().get(0).path()).isEqualTo(Path.of("/srv/fast"));
    assertThat(config.pools().get(0).capacityBytes()).isEqualTo(10L << 30);
    assertThat(config.pools().get(0).overprovisionRatio()).isEqualTo(2.5);
    assertThat(config.pools().get(0).fsTypes()).containsExactly("xfs", "ext4");
    assertThat(config.pools().get(1).capacityBytes()).isZero();
    assertThat(config.pools().get(1).overprovisionRatio()).isEqualTo(1.0);
    assertThat(config.pools().get(1).fsTypes()).containsExactly("ext4", "xfs");
    assertThat(config.allowedPathRoots())
        .containsExactly(Path.of("/var/lib/kubelet"), Path.of("/tmp/k"));
    assertThat(config.maxVolumesPerNode()).isEqualTo(64);
    assertThat(config.metricsAddress()).isEqualTo("127.0.0.1:9809");
    assertThat(config.healthAddress()).isEqualTo("0.0.0.0:9808");
    assertThat(config.registration())
        .hasValue(
            new KubeletRegistration(
                Path.of("/var/lib/kubelet/plugins/csi.example.com/csi.sock"),
                Path.of("/var/lib/kubelet/plugins_registry/csi.example.com-reg.sock")));
    assertThat(config.labelImportedSnapshots()).isTrue();
    assertThat(config.dataAddress()).isEqualTo("10.0.0.7:9810");
    assertThat(config.dataTlsDir()).hasValue(Path.of("/etc/soko/data-tls"));
  }

  @Test
  void defaults() {
    assertThat(run("--node-id=n1", "--pool=name=p,path=/srv/p")).isZero();
    DriverConfig config = launched.get();
    assertThat(config.endpoint()).isEqualTo("unix:///csi/csi.sock");
    assertThat(config.driverName()).isEqualTo("csi.soko.dev");
    assertThat(config.mode()).isEqualTo(DriverConfig.Mode.NODE);
    assertThat(config.allowedPathRoots()).containsExactly(Path.of("/var/lib/kubelet"));
    assertThat(config.maxVolumesPerNode()).isZero();
    assertThat(config.metricsAddress()).isEmpty();
    assertThat(config.healthAddress()).isEmpty();
    assertThat(config.registration()).isEmpty();
    assertThat(config.logLevel()).isEqualTo("info");
    assertThat(config.labelImportedSnapshots()).isFalse();
    assertThat(config.dataAddress()).isEmpty();
    assertThat(config.dataTlsDir()).isEmpty();
    assertThat(config.dataMaxReads()).isEqualTo(DriverConfig.DEFAULT_DATA_MAX_READS).isEqualTo(4);
    assertThat(config.nriSocket()).contains(Path.of("/var/run/nri/nri.sock"));
  }

  @Test
  void theNriSocketIsANodesAbsolutePathOrEmptyForOff() {
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--nri-socket=/nri/nri.sock")).isZero();
    assertThat(launched.get().nriSocket()).contains(Path.of("/nri/nri.sock"));
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--nri-socket=")).isZero();
    assertThat(launched.get().nriSocket()).isEmpty();
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--nri-socket=nri.sock")).isEqualTo(2);
    assertThat(run("--mode=controller")).isZero();
    assertThat(launched.get().nriSocket()).isEmpty();
    assertThat(run("--mode=controller", "--nri-socket=/nri/nri.sock")).isEqualTo(2);
  }

  @Test
  void theDataPortsReadsAreAtLeastOneAndOnlyANodeServesThem() {
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--data-max-reads=2")).isZero();
    assertThat(launched.get().dataMaxReads()).isEqualTo(2);
    launched.set(null);
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--data-max-reads=0")).isEqualTo(2);
    assertThat(err.toString()).contains("--data-max-reads must be at least 1, got 0");
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--data-max-reads=many")).isEqualTo(2);
    assertThat(err.toString()).contains("--data-max-reads must be a whole number, got 'many'");
    assertThat(run("--mode=controller", "--data-max-reads=2")).isEqualTo(2);
    assertThat(err.toString()).contains("--data-max-reads is only for node mode");
    assertThat(launched.get()).isNull();
  }

  @Test
  void theDataPortServesMutualTlsOnlyAndTheControllerMayHoldCredentialsWithoutAPort() {
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--data-address=10.0.0.7:9810"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--data-address needs --data-tls-dir");
    assertThat(launched.get()).isNull();
    assertThat(run("--mode=controller", "--data-tls-dir=/etc/soko/data-tls")).isZero();
    assertThat(launched.get().dataTlsDir()).hasValue(Path.of("/etc/soko/data-tls"));
    assertThat(launched.get().dataAddress()).isEmpty();
    launched.set(null);
    assertThat(run("--mode=controller", "--data-tls-dir=/d", "--data-address=10.0.0.7:9810"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--data-address is only for node mode");
  }

  @Test
  void aFlagGivenTwiceCountsOnceUnlessItIsRepeatable() {
    assertThat(
            run(
                "--node-id=n1",
                "--node-id=n2",
                "--pool=name=p,path=/srv/p",
                "--pool=name=q,path=/srv/q",
                "--allowed-path-root=/a",
                "--allowed-path-root=/b"))
        .isZero();
    DriverConfig config = launched.get();
    assertThat(config.nodeId()).isEqualTo("n2");
    assertThat(config.pools()).extracting(PoolConfig::name).containsExactly("p", "q");
    assertThat(config.allowedPathRoots()).containsExactly(Path.of("/a"), Path.of("/b"));
  }

  @Test
  void theConfigurationOfAnArgumentListIsWhatTheDriverWouldStartWith() {
    List<String> args = List.of("--node-id=n1", "--pool=name=p,path=/srv/p", "--log-level=warn");
    assertThat(run(args.toArray(String[]::new))).isZero();
    assertThat(DriverCommand.configOf(args)).isEqualTo(launched.get());
    assertThatThrownBy(() -> DriverCommand.configOf(List.of("--node-id=n1")))
        .isInstanceOf(DriverCommand.UsageException.class)
        .hasMessage("at least one --pool is required in node mode");
    assertThatThrownBy(() -> DriverCommand.configOf(List.of("--help")))
        .isInstanceOf(DriverCommand.UsageException.class);
  }

  @Test
  void registrationSocketIsNamedAfterTheDriverInSlashRegistrationByDefault() {
    assertThat(
            run(
                "--node-id=n1",
                "--pool=name=p,path=/srv/p",
                "--kubelet-registration-path=/var/lib/kubelet/plugins/csi.soko.dev/csi.sock"))
        .isZero();
    KubeletRegistration registration = launched.get().registration().orElseThrow();
    assertThat(registration.socket()).isEqualTo(Path.of("/registration/csi.soko.dev-reg.sock"));
    assertThat(registration.kubeletEndpoint())
        .isEqualTo(Path.of("/var/lib/kubelet/plugins/csi.soko.dev/csi.sock"));
  }

  @Test
  void healthzServesInControllerModeButRegistrationIsForNodesOnly() {
    assertThat(run("--mode=controller", "--health-address=0.0.0.0:9808")).isZero();
    assertThat(launched.get().healthAddress()).isEqualTo("0.0.0.0:9808");
    launched.set(null);
    assertThat(run("--mode=controller", "--kubelet-registration-path=/var/lib/kubelet/p/c.sock"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("only for node mode");
    assertThat(launched.get()).isNull();
  }

  @Test
  void registrationPathsThatAreNotAbsoluteAndCleanAreUsageErrors() {
    String node = "--node-id=n";
    String pool = "--pool=name=p,path=/p";
    String longName = "/var/lib/kubelet/plugins/" + "x".repeat(100) + "/csi.sock";
    List<List<String>> cases =
        List.of(
            List.of("--kubelet-registration-path=csi.sock"),
            List.of("--kubelet-registration-path=plugins/csi.sock"),
            List.of("--kubelet-registration-path="),
            List.of("--kubelet-registration-path=/"),
            List.of("--kubelet-registration-path=/var/lib/kubelet/../kubelet/csi.sock"),
            List.of("--kubelet-registration-path=/var/lib/kubelet/./csi.sock"),
            List.of("--kubelet-registration-path=/var/lib//kubelet/csi.sock"),
            List.of("--kubelet-registration-path=/var/lib/kubelet/plugins/"),
            List.of("--kubelet-registration-path=/var/lib/kubelet/a\0b"),
            List.of("--kubelet-registration-path=" + longName),
            List.of("--kubelet-registration-path=/k/csi.sock", "--registration-dir=registration"),
            List.of("--kubelet-registration-path=/k/csi.sock", "--registration-dir=/"),
            List.of("--kubelet-registration-path=/k/csi.sock", "--registration-dir=/reg/"),
            List.of("--kubelet-registration-path=/k/csi.sock", "--registration-dir=/a/../reg"),
            List.of(
                "--kubelet-registration-path=/k/csi.sock", "--registration-dir=/" + "r".repeat(90)),
            List.of(
                "--kubelet-registration-path=/k/csi.sock",
                "--registration-dir=/csi",
                "--endpoint=unix:///csi/csi.soko.dev-reg.sock"),
            List.of("--registration-dir=/registration"),
            List.of("--health-address=9808"),
            List.of("--health-address=host:port"));
    for (List<String> flags : cases) {
      List<String> args = new java.util.ArrayList<>(List.of(node, pool));
      args.addAll(flags);
      err.getBuffer().setLength(0);
      assertThat(run(args.toArray(String[]::new))).as("exit code of %s", flags).isEqualTo(2);
      assertThat(err.toString()).as("message for %s", flags).startsWith("soko-driver: ");
      assertThat(launched.get()).as("launched with %s", flags).isNull();
    }
  }

  @Test
  void controllerModeNeedsNoPoolsAndRefusesThem() {
    assertThat(run("--mode=controller")).isZero();
    assertThat(launched.get().pools()).isEmpty();
    assertThat(launched.get().mode()).isEqualTo(DriverConfig.Mode.CONTROLLER);
    launched.set(null);
    assertThat(run("--mode=controller", "--pool=name=p,path=/p")).isEqualTo(2);
    assertThat(err.toString()).contains("--pool is only for node mode");
  }

  @Test
  void immediateGrowthIsOnByDefaultAndOffOnlyInControllerMode() {
    assertThat(run("--mode=controller")).isZero();
    assertThat(launched.get().immediateGrowth()).isTrue();
    assertThat(run("--mode=controller", "--immediate-growth=false")).isZero();
    assertThat(launched.get().immediateGrowth()).isFalse();
    launched.set(null);
    assertThat(run("--node-id=n", "--pool=name=p,path=/p", "--immediate-growth=false"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--immediate-growth is only for controller mode");
  }

  @Test
  void poolPlacementKeysAndTheKubeletDirAreParsed() {
    assertThat(
            run(
                "--node-id=n1",
                "--kubelet-dir=/var/lib/kubelet",
                "--pool=name=p,path=/srv/p,requireMountPoint=true,allowRootFilesystem=true",
                "--pool=name=q,path=/srv/q"))
        .isZero();
    DriverConfig config = launched.get();
    assertThat(config.kubeletDir()).hasValue(Path.of("/var/lib/kubelet"));
    PoolConfig p = config.pools().get(0);
    assertThat(p.requireMountPoint()).isTrue();
    assertThat(p.allowRootFilesystem()).isTrue();
    PoolConfig q = config.pools().get(1);
    assertThat(q.requireMountPoint()).isFalse();
    assertThat(q.allowRootFilesystem()).isFalse();
  }

  @Test
  void withoutAKubeletDirTheRootFilesystemCheckIsOff() {
    assertThat(run("--node-id=n1", "--pool=name=p,path=/srv/p")).isZero();
    assertThat(launched.get().kubeletDir()).isEmpty();
  }

  @Test
  void badFlagsExitTwoWithAClearMessageAndNeverLaunch() {
    List<List<String>> cases =
        List.of(
            List.of("--pool=name=p,path=/p"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--driver-name=-bad-"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--endpoint=tcp://0:1"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--mode=both"),
            List.of("--node-id=n"),
            List.of("--node-id=n", "--pool=name=P,path=/p"),
            List.of("--node-id=n", "--pool=name=p,path=relative"),
            List.of("--node-id=n", "--pool=name=p,path=/p,overprovision=0.5"),
            List.of("--node-id=n", "--pool=name=p,path=/p,fs=btrfs"),
            List.of("--node-id=n", "--pool=name=p,path=/p,size=1Gi"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--pool=name=p,path=/q"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--allowed-path-root=rel"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--max-volumes-per-node=-1"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--max-volumes-per-node=lots"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--metrics-address=nohost"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--log-level=loud"),
            List.of("--node-id=a/b", "--pool=name=p,path=/p"),
            List.of("--unknown"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "extra"),
            List.of("--node-id=n", "--pool=name=p,path=/p,requireMountPoint=yes"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--kubelet-dir=/var/lib/kubelet/"),
            List.of("--mode=controller", "--kubelet-dir=/var/lib/kubelet"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--label-imported-snapshots=yes"),
            List.of("--mode=controller", "--label-imported-snapshots=true"),
            List.of("--mode=controller", "--immediate-growth=no"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--data-address=nohost"),
            List.of("--node-id=n", "--pool=name=p,path=/p", "--data-tls-dir=rel/tls"),
            List.of("--node-id=n", "--pool"));
    for (List<String> args : cases) {
      err.getBuffer().setLength(0);
      assertThat(run(args.toArray(String[]::new))).as("exit code of %s", args).isEqualTo(2);
      assertThat(err.toString()).as("message for %s", args).startsWith("soko-driver: ");
      assertThat(launched.get()).as("launched with %s", args).isNull();
    }
  }

  @Test
  void helpDocumentsEveryFlagAndPoolFieldWithinNinetySixColumns() {
    assertThat(run("--help")).isZero();
    String help = out.toString();
    for (Flag flag : Flag.values()) {
      assertThat(help).containsPattern("\n  " + Pattern.quote(flag.synopsis()) + "[ \n]");
    }
    for (PoolField field : PoolField.values()) {
      assertThat(help).containsPattern("\n  " + Pattern.quote(field.synopsis()) + "[ \n]");
    }
    assertThat(help)
        .contains(
            "--pool=SPEC",
            "name=NAME,path=DIR[,capacity=QUANTITY]",
            "[,backend=image-file|btrfs-subvolume][,nodeSelector:KEY=VALUE]...",
            "Default: csi.soko.dev.",
            "Node mode only.");
    assertThat(help.lines()).allMatch(line -> line.length() <= 96, "at most 96 columns");
    assertThat(run("-h")).isZero();
    assertThat(launched.get()).isNull();
  }

  @Test
  void versionNamesTheCsiSpec() {
    assertThat(run("--version")).isZero();
    assertThat(out.toString()).startsWith("soko-driver ").contains("CSI spec v1.12.0");
    assertThat(launched.get()).isNull();
  }

  @Test
  void aFailingLauncherExitsOneWithItsMessage() {
    int exit =
        DriverCommand.execute(
            config -> {
              throw new IllegalStateException("pool is gone");
            },
            new PrintWriter(out),
            new PrintWriter(err),
            "--node-id=n",
            "--pool=name=p,path=/p");
    assertThat(exit).isEqualTo(1);
    assertThat(err.toString()).contains("pool is gone");
  }
}
