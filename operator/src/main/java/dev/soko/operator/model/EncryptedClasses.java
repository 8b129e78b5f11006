package dev.soko.operator.model;

import dev.soko.api.v1alpha1.EncryptionSpec;
import dev.soko.api.v1alpha1.FsType;
import dev.soko.api.v1alpha1.KeySecretSpec;
import dev.soko.api.v1alpha1.PoolSpec;
import dev.soko.api.v1alpha1.StorageClassSpec;
import dev.soko.api.v1alpha1.StorageClusterSpec;
import dev.soko.driver.config.PoolConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A storage class's {@code encryption}: the StorageClass parameters it renders to, and the CRD's
 * rules about it repeated for {@code render} and an older CRD. The driver's side is
 * driver/.../encryption/EncryptionAttribute (parameter {@value #PARAMETER}, and the same refusals
 * at CreateVolume).
 */
final class EncryptedClasses {
  /** The driver's class parameter that asks for encryption, and its one value. */
  static final String PARAMETER = "encryption";

  /**
   * The external-provisioner resolves the templates in these two, puts the result in the
   * PersistentVolume's nodeStageSecretRef, and the kubelet hands the Secret's fields to
   * NodeStageVolume. The provisioner itself never reads that Secret.
   */
  static final String SECRET_NAME_PARAMETER = "csi.storage.k8s.io/node-stage-secret-name";

  static final String SECRET_NAMESPACE_PARAMETER = "csi.storage.k8s.io/node-stage-secret-namespace";

  private static final String WHY =
      "fscrypt encrypts the files of the volume's own ext4 filesystem; encrypting it would need"
          + " dm-crypt, which the driver does not use";

  private EncryptedClasses() {}

  /** The class's encryption parameters, in the order written; none for a plain class. */
  static Map<String, String> parameters(StorageClassSpec sc) {
    EncryptionSpec e = sc.getEncryption();
    Map<String, String> out = new LinkedHashMap<>();
    if (e == null) {
      return out;
    }
    KeySecretSpec secret = e.getKeySecret() == null ? new KeySecretSpec() : e.getKeySecret();
    out.put(PARAMETER, e.getMode().name());
    out.put(SECRET_NAME_PARAMETER, orElse(secret.getName(), KeySecretSpec.DEFAULT_NAME));
    out.put(
        SECRET_NAMESPACE_PARAMETER, orElse(secret.getNamespace(), KeySecretSpec.DEFAULT_NAMESPACE));
    return out;
  }

  /** One problem per encrypted class that its pool or filesystem cannot serve. */
  static void check(StorageClusterSpec spec, List<String> problems) {
    for (StorageClassSpec c : spec.getStorageClasses()) {
      if (c.getEncryption() == null) {
        continue;
      }
      if (c.getEncryption().getMode() == null) {
        problems.add(
            "spec.storageClasses[].encryption.mode of class '" + c.getName() + "' is required");
        continue;
      }
      spec.getPools().stream()
          .filter(p -> p.getName() != null && p.getName().equals(c.getPool()))
          .findFirst()
          .ifPresent(p -> storageClass(c, p, spec, problems));
    }
  }

  private static void storageClass(
      StorageClassSpec c, PoolSpec p, StorageClusterSpec spec, List<String> problems) {
    PoolConfig.Backend backend = PoolBackends.facts(p);
    FsType fs = PoolBackends.fsTypeOf(c, spec);
    if (!backend.formatsVolumes()) {
      problems.add(
          "spec.storageClasses[].encryption of class '"
              + c.getName()
              + "' needs an ImageFile pool: pool '"
              + p.getName()
              + "' is "
              + backend.crdName()
              + ", whose volumes share the pool's filesystem, and "
              + WHY);
    } else if (fs != FsType.ext4) {
      problems.add(
          "spec.storageClasses[].encryption of class '"
              + c.getName()
              + "' needs fsType ext4, not "
              + fs
              + ": "
              + WHY);
    }
  }

  private static String orElse(String value, String otherwise) {
    return value == null ? otherwise : value;
  }
}
