package dev.soko.driver.sys;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SyscallExceptionTest {

  @Test
  void namesTheCallTheErrnoAndItsText() {
    SyscallException e = new SyscallException("umount2 /k/t", Errno.EINVAL, "Invalid argument");
    assertThat(e).hasMessage("umount2 /k/t: EINVAL (Invalid argument)");
    assertThat(e.errno()).isEqualTo(22);
    assertThat(e.errnoName()).isEqualTo("EINVAL");
    assertThat(e.call()).isEqualTo("umount2 /k/t");
  }

  @Test
  void knownErrnosHaveGlibcsTextAndUnknownOnesTheirNumber() {
    assertThat(new SyscallException("ioctl 0x4c0a", Errno.EBUSY))
        .hasMessage("ioctl 0x4c0a: EBUSY (Device or resource busy)");
    assertThat(Errno.name(Errno.ENXIO)).isEqualTo("ENXIO");
    assertThat(Errno.name(Errno.ENOTTY)).isEqualTo("ENOTTY");
    assertThat(new SyscallException("mount", 200))
        .hasMessage("mount: errno 200 (Unknown error 200)");
  }
}
