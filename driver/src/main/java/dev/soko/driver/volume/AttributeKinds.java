package dev.soko.driver.volume;

import dev.soko.driver.attribute.AttributeRegistry;
import dev.soko.driver.encryption.EncryptionAttribute;
import dev.soko.driver.iolimit.IoLimitAttribute;
import dev.soko.driver.sys.LinuxSyscalls;

/**
 * The kinds of per-volume attribute this driver has: the one list a new kind joins. Each kind lives
 * in a package of its own and reaches the engine only through {@link AttributeRegistry}.
 */
final class AttributeKinds {
  private AttributeKinds() {}

  /** A fresh set (a kind may start acting later, as IO limits do once a controller is found). */
  static AttributeRegistry all() {
    return AttributeRegistry.of(
        new IoLimitAttribute(), new EncryptionAttribute(new LinuxSyscalls()));
  }
}
