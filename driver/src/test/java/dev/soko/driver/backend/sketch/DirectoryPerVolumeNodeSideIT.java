package dev.soko.driver.backend.sketch;

import dev.soko.driver.backend.BackendUnderTest;
import dev.soko.driver.backend.NodeSideContract;

/**
 * The node-side contract for the sketch backend, its directories bind-mounted from a temporary
 * directory: a new backend's node side proves itself here too. Needs root; fails without it.
 */
class DirectoryPerVolumeNodeSideIT extends NodeSideContract {
  @Override
  protected BackendUnderTest subject() {
    return DirectoryPerVolumeStorageTest.SKETCH;
  }
}
