package dev.soko.driver.attribute;

import java.nio.file.Path;
import java.util.Optional;

/**
 * A volume published to a pod on this node, as the attributes' effects see it.
 *
 * @param target the publication's target path (what unpublish names)
 * @param podUid the pod's UID, from the kubelet's pod info or its target's layout
 * @param deviceNumber the volume's own block device ("major:minor"), empty when it has none
 */
public record Publication(
    String volumeId, Path target, String podUid, Optional<String> deviceNumber) {}
