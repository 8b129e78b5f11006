package dev.soko.driver.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;

class RolesTest {
  @Test
  void theRoleIsTheSubjectsOneCommonName() {
    assertThat(Roles.commonName(new X500Principal("O=soko, CN=soko-node"))).hasValue("soko-node");
    assertThat(Roles.commonName(new X500Principal("CN=soko-controller")))
        .hasValue("soko-controller");
    assertThat(Roles.commonName(new X500Principal("O=soko"))).isEmpty();
    // Two CNs would let a certificate claim two roles: it has none.
    assertThat(Roles.commonName(new X500Principal("CN=soko-node, CN=soko-controller"))).isEmpty();
    assertThat(Roles.commonName(new X500Principal("CN=soko-node\\, really")))
        .hasValue("soko-node, really");
  }
}
