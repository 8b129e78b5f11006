package dev.soko.driver.handoff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.soko.driver.handoff.NodeRequestHandler.Outcome;
import dev.soko.driver.json.Json;
import dev.soko.driver.json.JsonParser;
import dev.soko.driver.testing.FakeVolumeManager;
import dev.soko.driver.volume.ExpandResult;
import dev.soko.driver.volume.StorageException;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The node's side of an ExpandVolume request, and the answer as the status carries it. */
class ExpandRequestTest {
  final FakeVolumeManager engine = new FakeVolumeManager();
  final LocalRequests node = new LocalRequests(engine);

  static NodeRequest request(Map<String, String> parameters) {
    return new NodeRequest("expandvolume-x", 1, "vol-1", RemoteExpand.OPERATION, parameters);
  }

  @Test
  void aGrowthIsCarriedOutNowAndAnswersWhetherTheKubeletHasWorkLeft() {
    Outcome outcome =
        node.handle(request(Map.of("requiredBytes", "2147483648", "limitBytes", "0")));

    assertThat(engine.lastExpand).containsExactly(2147483648L, 0);
    assertThat(outcome)
        .isEqualTo(
            Outcome.applied(
                "expansion", Map.of("capacityBytes", 2147483648L, "nodeExpansionRequired", false)));
  }

  @Test
  void sizesThatAreNotBytesAreRefusedAsInvalid() {
    Outcome outcome = node.handle(request(Map.of("requiredBytes", "2Gi")));

    assertThat(outcome.phase()).isEqualTo("Refused");
    assertThat(outcome.message()).isEqualTo("requiredBytes must be a number of bytes, not 2Gi");
    assertThat(outcome.result()).containsEntry("reason", "INVALID_ARGUMENT");
    assertThat(node.handle(request(Map.of("limitBytes", "-1"))).phase()).isEqualTo("Refused");
  }

  @Test
  void aPoolWithoutTheRoomIsRefusedUnderItsCode() {
    engine.nextFailure = StorageException.outOfRange("pool main has 10 bytes available");

    Outcome outcome = node.handle(request(Map.of("requiredBytes", "20")));

    assertThat(outcome.phase()).isEqualTo("Refused");
    assertThat(outcome.result()).containsEntry("reason", "OUT_OF_RANGE");
  }

  @Test
  void theAnswerReadsBackFromItsJson() {
    ExpandResult result = new ExpandResult(3L << 30, true);
    Object status = JsonParser.parse(Json.write(RemoteExpand.answer(result)));

    assertThat(RemoteExpand.parse(status)).contains(result);
    assertThat(RemoteExpand.parse(Map.of("capacityBytes", 1L))).isEqualTo(Optional.empty());
    assertThat(RemoteExpand.parse(null)).isEmpty();
  }
}
