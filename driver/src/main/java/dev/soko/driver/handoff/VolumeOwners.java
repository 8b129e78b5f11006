package dev.soko.driver.handoff;

import static dev.soko.driver.kube.Reflector.cut;
import static dev.soko.driver.kube.Reflector.encode;
import static dev.soko.driver.kube.Reflector.text;

import dev.soko.driver.json.JsonParser;
import dev.soko.driver.kube.KubeApi;
import dev.soko.driver.kube.Reflector;
import dev.soko.driver.volume.StorageException;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which node owns each of this driver's volumes, as the PersistentVolumes say: the controller side
 * gets a bare volume id from ControllerModifyVolume and must find the node to ask. Lists the
 * PersistentVolumes in pages and then watches them, keeping for each volume of this driver only its
 * node (the value of the topology key in the PV's node affinity) and the PV's name and UID (the
 * request's owner): a few hundred bytes per volume, not the PV.
 */
public final class VolumeOwners implements AutoCloseable, Reflector.Source {
  static final Duration MIN_WATCH = Duration.ofMinutes(5);
  static final int PAGE = 500;
  static final int MAX_PAGE_CHARS = 32 << 20;
  private static final String PVS = "/api/v1/persistentvolumes";

  /** The node that owns a volume, and the PersistentVolume that holds it. */
  public record Owner(String node, String pvName, String pvUid) {}

  private final KubeApi api;
  private final String driver;
  private final String topologyKey;
  private final Reflector reflector;
  private final Map<String, Owner> byVolume = new ConcurrentHashMap<>();
  private volatile boolean synced;

  /**
   * @param driver the CSI driver name whose volumes are kept
   * @param topologyKey the node affinity key that names a volume's node
   */
  public VolumeOwners(KubeApi api, String driver, String topologyKey) {
    this(api, driver, topologyKey, MIN_WATCH);
  }

  VolumeOwners(KubeApi api, String driver, String topologyKey, Duration minWatch) {
    this.api = api;
    this.driver = driver;
    this.topologyKey = topologyKey;
    this.reflector = new Reflector(api, "volume-owners", "watching PersistentVolumes", minWatch);
    reflector.source(this);
  }

  public void start() {
    reflector.start();
  }

  /** The volume's owner; empty when no PersistentVolume of this driver holds it (yet). */
  public Optional<Owner> of(String volumeId) {
    return Optional.ofNullable(byVolume.get(volumeId));
  }

  /**
   * The volume's owner; NOT_FOUND when no PersistentVolume of this driver holds it, UNAVAILABLE
   * before the first list (a miss then proves nothing), as a CSI call answers either.
   */
  public Owner require(String volumeId) {
    return of(volumeId)
        .orElseThrow(
            () ->
                synced
                    ? StorageException.notFound(
                        "no PersistentVolume of this driver holds volume %s", volumeId)
                    : new StorageException(
                        StorageException.Reason.UNAVAILABLE,
                        "the PersistentVolumes are not read yet"));
  }

  /** Whether the first full list has been read: before it, a miss proves nothing. */
  public boolean synced() {
    return synced;
  }

  @Override
  public Optional<String> read() throws InterruptedException {
    Map<String, Owner> next = new HashMap<>();
    String token = "";
    String version;
    do {
      String path = PVS + "?limit=" + PAGE + (token.isEmpty() ? "" : "&continue=" + encode(token));
      Object page;
      try {
        KubeApi.Response response = api.get(path, MAX_PAGE_CHARS);
        if (!response.ok()) {
          reflector.failed(
              "listing PersistentVolumes HTTP " + response.status(), cut(response.body()));
          return Optional.empty();
        }
        page = JsonParser.parse(response.body());
      } catch (IOException | IllegalArgumentException e) {
        reflector.failed("listing PersistentVolumes " + e.getClass().getSimpleName(), e.toString());
        return Optional.empty();
      }
      if (JsonParser.at(page, "items") instanceof List<?> items) {
        for (Object pv : items) {
          owned(pv).ifPresent(entry -> next.put(entry.getKey(), entry.getValue()));
        }
      }
      token = text(JsonParser.at(page, "metadata", "continue"));
      version = text(JsonParser.at(page, "metadata", "resourceVersion"));
    } while (!token.isEmpty());
    reflector.succeeded("listing PersistentVolumes");
    byVolume.keySet().retainAll(next.keySet());
    byVolume.putAll(next);
    synced = true;
    return version.isEmpty() ? Optional.empty() : Optional.of(version);
  }

  @Override
  public String watchPath() {
    return PVS + "?fieldSelector="; // every PV: the empty selector selects all
  }

  @Override
  public void event(String type, Object object) {
    Optional<Map.Entry<String, Owner>> entry = owned(object);
    if (entry.isEmpty()) {
      return;
    }
    if ("DELETED".equals(type)) {
      byVolume.remove(entry.get().getKey());
    } else if ("ADDED".equals(type) || "MODIFIED".equals(type)) {
      byVolume.put(entry.get().getKey(), entry.get().getValue());
    }
  }

  /** The volume id and owner of a PV of this driver whose node affinity names one node. */
  private Optional<Map.Entry<String, Owner>> owned(Object pv) {
    if (!driver.equals(JsonParser.at(pv, "spec", "csi", "driver"))) {
      return Optional.empty();
    }
    String handle = text(JsonParser.at(pv, "spec", "csi", "volumeHandle"));
    String node = node(pv);
    if (handle.isEmpty() || node.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        Map.entry(
            handle,
            new Owner(
                node,
                text(JsonParser.at(pv, "metadata", "name")),
                text(JsonParser.at(pv, "metadata", "uid")))));
  }

  private String node(Object pv) {
    if (!(JsonParser.at(pv, "spec", "nodeAffinity", "required", "nodeSelectorTerms")
        instanceof List<?> terms)) {
      return "";
    }
    for (Object term : terms) {
      if (JsonParser.at(term, "matchExpressions") instanceof List<?> expressions) {
        for (Object e : expressions) {
          if (topologyKey.equals(JsonParser.at(e, "key"))
              && "In".equals(JsonParser.at(e, "operator"))
              && JsonParser.at(e, "values") instanceof List<?> values
              && values.size() == 1) {
            return text(values.get(0));
          }
        }
      }
    }
    return "";
  }

  @Override
  public void close() {
    reflector.close();
  }
}
