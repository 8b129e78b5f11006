package dev.soko.operator.model;

import static dev.soko.operator.model.PoolBackendRenderTest.btrfsSample;
import static dev.soko.operator.model.PoolBackendRenderTest.storageClass;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.api.v1alpha1.EncryptionMode;
import dev.soko.api.v1alpha1.EncryptionSpec;
import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.KeySecretSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageCluster;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A storage class's {@code encryption} in the render (the driver's parameter and the node-stage
 * Secret, with the operator's defaults) and in {@link SpecValidator} (the CRD's rules for render
 * and an older CRD).
 */
class EncryptedClassesTest {
  @Test
  void anEncryptedClassGetsFscryptExt4AndAKeySecretPerClaimByDefault() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getStorageClasses().add(encrypted("secure", null, null));
    assertThat(SpecValidator.problems(sc.getSpec())).isEmpty();
    assertThat(parameters(sc, "secure"))
        .containsExactly(
            Map.entry("pool", "nvme"),
            Map.entry("csi.storage.k8s.io/fstype", "ext4"),
            Map.entry("encryption", "fscrypt"),
            Map.entry("csi.storage.k8s.io/node-stage-secret-name", "${pvc.name}-key"),
            Map.entry("csi.storage.k8s.io/node-stage-secret-namespace", "${pvc.namespace}"));
  }

  @Test
  void aGivenKeySecretIsUsedAsWrittenAndAMissingHalfIsDefaulted() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getStorageClasses().add(encrypted("shared", "team-key", "vault"));
    sc.getSpec().getStorageClasses().add(encrypted("by-volume", "${pv.name}", null));
    assertThat(parameters(sc, "shared"))
        .containsEntry("csi.storage.k8s.io/node-stage-secret-name", "team-key")
        .containsEntry("csi.storage.k8s.io/node-stage-secret-namespace", "vault");
    assertThat(parameters(sc, "by-volume"))
        .containsEntry("csi.storage.k8s.io/node-stage-secret-name", "${pv.name}")
        .containsEntry("csi.storage.k8s.io/node-stage-secret-namespace", "${pvc.namespace}");
  }

  /** A class without encryption renders as before the field existed (same parameters, no churn). */
  @Test
  void aPlainClassGetsNoEncryptionParameters() {
    assertThat(parameters(Fixtures.sample(), "soko-nvme"))
        .containsOnlyKeys("pool", "csi.storage.k8s.io/fstype");
  }

  @Test
  void anEncryptedXfsClassIsRefusedSayingDmCryptWouldBeNeeded() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getStorageClasses().get(0).setEncryption(fscrypt());
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.storageClasses[].encryption of class 'soko-nvme' needs fsType ext4, not xfs:"
                + " fscrypt encrypts the files of the volume's own ext4 filesystem; encrypting it"
                + " would need dm-crypt, which the driver does not use");
  }

  @Test
  void anEncryptedClassOnABtrfsSubvolumePoolIsRefusedGivenOrDefaultedFsType() {
    StorageCluster sc = btrfsSample();
    sc.getSpec().getStorageClasses().get(0).setEncryption(fscrypt());
    StorageClassSpec unset = encrypted("unset", null, null);
    unset.setPool("nvme");
    sc.getSpec().getStorageClasses().add(unset);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .hasSize(2)
        .allSatisfy(
            p ->
                assertThat(p)
                    .contains(
                        "needs an ImageFile pool: pool 'nvme' is BtrfsSubvolume, whose volumes"
                            + " share the pool's filesystem",
                        "dm-crypt"));
  }

  /** An encrypted class is ext4, so a pool that allows xfs only refuses it (FilesystemChecks). */
  @Test
  void anEncryptedClassOnAnXfsOnlyPoolIsRefusedForItsFilesystem() {
    StorageCluster sc = Fixtures.sample();
    sc.getSpec().getPools().get(0).setFsTypes(List.of(FsType.xfs));
    sc.getSpec().getStorageClasses().add(encrypted("secure", null, null));
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly(
            "spec.storageClasses[].fsType of class 'secure' is ext4 (its pool's default), not among"
                + " the fsTypes [xfs] of pool 'nvme'");
  }

  /** The schema requires mode; render (no API server) says so rather than guess. */
  @Test
  void anEncryptionWithoutModeIsRefused() {
    StorageCluster sc = Fixtures.sample();
    StorageClassSpec c = encrypted("secure", null, null);
    c.getEncryption().setMode(null);
    sc.getSpec().getStorageClasses().add(c);
    assertThat(SpecValidator.problems(sc.getSpec()))
        .containsExactly("spec.storageClasses[].encryption.mode of class 'secure' is required");
  }

  private static StorageClassSpec encrypted(String name, String secret, String namespace) {
    StorageClassSpec c = storageClass(name, "nvme", null);
    EncryptionSpec e = fscrypt();
    if (secret != null || namespace != null) {
      KeySecretSpec key = new KeySecretSpec();
      key.setName(secret);
      key.setNamespace(namespace);
      e.setKeySecret(key);
    }
    c.setEncryption(e);
    return c;
  }

  private static EncryptionSpec fscrypt() {
    EncryptionSpec e = new EncryptionSpec();
    e.setMode(EncryptionMode.fscrypt);
    return e;
  }

  private static Map<String, String> parameters(StorageCluster sc, String className) {
    return Fixtures.desired(sc, "1.34").storageClasses().stream()
        .filter(s -> s.getMetadata().getName().equals(className))
        .map(StorageClass::getParameters)
        .findFirst()
        .orElseThrow();
  }
}
