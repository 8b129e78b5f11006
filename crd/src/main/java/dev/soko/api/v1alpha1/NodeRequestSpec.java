package dev.soko.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.SelectableField;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import java.util.Map;

/** What the node is asked to do; written by the controller-mode driver only. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value =
        "!(self.operation in ['ModifyVolume', 'ExpandVolume', 'CreateSnapshot'])"
            + " || has(self.volumeId)",
    message = "ModifyVolume, ExpandVolume and CreateSnapshot name a volumeId")
@ValidationRule(
    value = "self.operation != 'ExpandVolume' || has(self.parameters)",
    message = "ExpandVolume names its sizes in parameters")
@ValidationRule(
    value =
        "!(self.operation in ['CreateSnapshot', 'CreateVolumeGroupSnapshot']) || has(self.name)",
    message = "a create names the snapshot's name")
@ValidationRule(
    value = "self.operation != 'CreateVolumeGroupSnapshot' || has(self.volumeIds)",
    message = "CreateVolumeGroupSnapshot names its volumeIds")
@ValidationRule(
    value =
        "!(self.operation in ['GetVolumeGroupSnapshot', 'DeleteVolumeGroupSnapshot'])"
            + " || has(self.groupSnapshotId)",
    message = "GetVolumeGroupSnapshot and DeleteVolumeGroupSnapshot name a groupSnapshotId")
@ValidationRule(
    value = "self.operation != 'DeleteSnapshot' || has(self.snapshotIds)",
    message = "DeleteSnapshot names the snapshot in snapshotIds")
public record NodeRequestSpec(
    @JsonPropertyDescription("The node that owns the volume (also in the soko.dev/node label).")
        @Required
        @Size(max = 63)
        @SelectableField
        String node,
    @JsonPropertyDescription(
            "The CSI volume id the request is about: ModifyVolume's and ExpandVolume's volume,"
                + " CreateSnapshot's source.")
        @Size(min = 1, max = 128)
        String volumeId,
    @JsonPropertyDescription(
            "What to do: ModifyVolume (apply mutable parameters), ExpandVolume (grow the"
                + " volume), CreateSnapshot, DeleteSnapshot, CreateVolumeGroupSnapshot,"
                + " GetVolumeGroupSnapshot, DeleteVolumeGroupSnapshot.")
        @Required
        NodeOperation operation,
    @JsonPropertyDescription(
            "The operation's parameters: for ModifyVolume the volume's mutable parameters, whole"
                + " (a parameter left out goes back to its default); for ExpandVolume"
                + " requiredBytes and limitBytes, decimal, as ControllerExpandVolume's capacity"
                + " range (0: unset).")
        @Size(max = MAX_PARAMETERS)
        Map<String, String> parameters,
    @JsonPropertyDescription(
            "The CSI name of the snapshot or group snapshot to create: the same name gives the"
                + " same snapshot.")
        @Size(min = 1, max = 128)
        String name,
    @JsonPropertyDescription("CreateVolumeGroupSnapshot's source volume ids, in order.")
        @Size(min = 1, max = MAX_IDS)
        List<String> volumeIds,
    @JsonPropertyDescription("The node's id of the group snapshot to describe or delete.")
        @Size(min = 1, max = 128)
        String groupSnapshotId,
    @JsonPropertyDescription(
            "The snapshot ids the call names: a group snapshot's members, or DeleteSnapshot's"
                + " one snapshot.")
        @Size(max = MAX_IDS)
        List<String> snapshotIds) {
  public static final int MAX_PARAMETERS = 32;
  public static final int MAX_IDS = 128;
}
