package dev.soko.driver.volume;

import static dev.soko.driver.volume.EngineFixture.MIB;
import static dev.soko.driver.volume.EngineFixture.fs;
import static dev.soko.driver.volume.EngineFixture.reason;
import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.model.AccessType;
import dev.soko.driver.model.GroupSnapshot;
import dev.soko.driver.model.Snapshot;
import dev.soko.driver.model.Volume;
import dev.soko.driver.state.GroupSnapshotRecord;
import dev.soko.driver.state.Ids;
import dev.soko.driver.state.RecordState;
import dev.soko.driver.volume.StorageException.Reason;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's part of a group snapshot across nodes, over fake mounts: it holds its members frozen
 * until the gate answers, copies only then, and keeps nothing when the gate says no.
 */
class GroupPartTest {
  @TempDir Path dir;

  private static final SpanningGroupId ID =
      new SpanningGroupId(Ids.newGroupId(), List.of("node-1", "node-2"));

  private List<String> twoStaged(EngineFixture f, LocalVolumeManager engine) {
    List<String> ids = new ArrayList<>();
    for (String name : List.of("data", "log")) {
      Volume v = engine.createVolume(fs(name, 20 * MIB));
      engine.stage(
          new StageRequest(
              v.id(), f.kubelet.resolve("staging/" + name), AccessType.FILESYSTEM, "", List.of()));
      ids.add(v.id());
    }
    return ids;
  }

  @Test
  void thePartWaitsForTheGateWithItsMembersFrozenAndCopiesOnlyAfter() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      List<String> ids = twoStaged(f, engine);
      List<Set<Path>> copies = new ArrayList<>();
      GroupSnapshotTest.copyRecordingFreezes(f, copies);
      List<Set<Path>> frozenAtGate = new ArrayList<>();
      List<Integer> copiesAtGate = new ArrayList<>();

      GroupSnapshot part =
          engine.takeGroupPart(
              "g",
              ID,
              ids,
              () -> {
                frozenAtGate.add(f.mounter.frozen());
                copiesAtGate.add(copies.size());
                return true;
              });

      assertThat(copiesAtGate).as("nothing copied before every node is frozen").containsExactly(0);
      assertThat(frozenAtGate.get(0))
          .containsOnly(f.kubelet.resolve("staging/data"), f.kubelet.resolve("staging/log"));
      assertThat(copies).hasSize(2);
      assertThat(f.mounter.frozen()).isEmpty();
      assertThat(part.id()).isEqualTo(ID.id());
      assertThat(part.members())
          .allSatisfy(m -> assertThat(m.groupSnapshotId()).isEqualTo(ID.id()));
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items())
          .as("ListSnapshots names the whole group, which the snapshot controller matches")
          .extracting(Snapshot::groupSnapshotId)
          .containsOnly(ID.id());
      assertThat(engine.getGroupSnapshot(ID.id(), List.of())).isEqualTo(part);

      engine.deleteGroupSnapshot(ID.id(), List.of());
      assertThat(engine.listSnapshots(SnapshotFilter.ALL, "", 0).items()).isEmpty();
    }
  }

  @Test
  void aGateThatSaysNoThawsAndKeepsNothing() throws Exception {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      List<String> ids = twoStaged(f, engine);
      long available = engine.capacity().get(0).availableBytes();
      List<Set<Path>> copies = new ArrayList<>();
      GroupSnapshotTest.copyRecordingFreezes(f, copies);

      assertThat(reason(() -> engine.takeGroupPart("g", ID, ids, () -> false)))
          .isEqualTo(Reason.ABORTED);
      assertThat(copies).isEmpty();
      assertThat(f.mounter.frozen()).isEmpty();
      GroupSnapshotTest.assertNothingLeft(f, engine, available);
      // The name is free again for the retry.
      assertThat(engine.takeGroupPart("g", ID, ids, () -> true).readyToUse()).isTrue();
    }
  }

  @Test
  void aRetriedPartIsAnsweredAsTakenWithoutFreezingOrAskingTheGate() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      List<String> ids = twoStaged(f, engine);
      GroupSnapshot first = engine.takeGroupPart("g", ID, ids, () -> true);
      int freezes = (int) f.mounter.log().stream().filter(l -> l.startsWith("freeze")).count();
      AtomicInteger asked = new AtomicInteger();
      SpanningGroupId other = new SpanningGroupId(Ids.newGroupId(), ID.nodes());

      GroupSnapshot again =
          engine.takeGroupPart(
              "g",
              other,
              ids,
              () -> {
                asked.incrementAndGet();
                return true;
              });

      assertThat(again).as("the earlier part, under its own ID").isEqualTo(first);
      assertThat(asked).hasValue(0);
      assertThat(f.mounter.log().stream().filter(l -> l.startsWith("freeze")).count())
          .isEqualTo(freezes);
    }
  }

  @Test
  void aMemberNothingCanFreezeIsRefusedAsOnOneNode() {
    EngineFixture f = new EngineFixture(dir, 1024 * MIB);
    try (LocalVolumeManager engine = f.open()) {
      Volume raw = engine.createVolume(EngineFixture.block("raw", MIB));
      engine.stage(
          new StageRequest(
              raw.id(), f.kubelet.resolve("staging/raw"), AccessType.BLOCK, "", List.of()));
      AtomicInteger asked = new AtomicInteger();
      assertThat(
              reason(
                  () ->
                      engine.takeGroupPart(
                          "g",
                          ID,
                          List.of(raw.id()),
                          () -> {
                            asked.incrementAndGet();
                            return true;
                          })))
          .isEqualTo(Reason.FAILED_PRECONDITION);
      assertThat(asked).hasValue(0);
    }
  }

  @Test
  void theWholeGroupsIdIsKeptWithThePartAndCheckedWhenRead() {
    GroupSnapshotRecord part =
        new GroupSnapshotRecord(
            ID.partId(),
            "g",
            "p",
            List.of(Ids.newVolumeId()),
            List.of(Ids.newSnapshotId()),
            Instant.ofEpochSecond(7),
            RecordState.READY,
            ID.id());
    assertThat(GroupSnapshotRecord.fromFields(part.toFields())).isEqualTo(part);
    var forged = new java.util.HashMap<>(part.toFields());
    forged.put("spanningId", "group-other@a+b");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> GroupSnapshotRecord.fromFields(forged))
        .isInstanceOf(IllegalArgumentException.class);
    GroupSnapshotRecord single = part.withState(RecordState.READY);
    assertThat(single.shownId()).isEqualTo(ID.id());
  }

  @Test
  void anIdTooLongForCsiIsRefused() {
    SpanningGroupId tooLong =
        new SpanningGroupId(Ids.newGroupId(), List.of("n".repeat(60), "m".repeat(60)));
    assertThat(reason(tooLong::checkLength)).isEqualTo(Reason.INVALID_ARGUMENT);
    assertThat(SpanningGroupId.tryParse(ID.id())).contains(ID);
    assertThat(SpanningGroupId.tryParse("group-x@node-1")).isEmpty();
  }
}
