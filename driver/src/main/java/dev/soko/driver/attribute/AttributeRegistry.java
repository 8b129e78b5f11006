package dev.soko.driver.attribute;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The kinds of per-volume attribute this driver knows, and the one way the engine reaches them: it
 * checks a request's parameters here, keeps what this returns, and tells this when a volume is
 * staged, published or changed; this routes each key to the kind that owns it.
 */
public final class AttributeRegistry {
  private final List<AttributeKind> kinds;
  private final Map<String, AttributeKind> owners = new HashMap<>();

  private AttributeRegistry(List<AttributeKind> kinds) {
    this.kinds = List.copyOf(kinds);
    for (AttributeKind kind : this.kinds) {
      for (AttributeKey key : kind.keys()) {
        AttributeKind before = owners.put(key.name(), kind);
        if (before != null) {
          throw new IllegalArgumentException(
              "attribute key "
                  + key.name()
                  + " is both "
                  + before.name()
                  + "'s and "
                  + kind.name());
        }
      }
    }
  }

  public static AttributeRegistry of(List<AttributeKind> kinds) {
    return new AttributeRegistry(kinds);
  }

  public static AttributeRegistry of(AttributeKind... kinds) {
    return new AttributeRegistry(List.of(kinds));
  }

  /** The kind of class {@code type}, when it is one of these. */
  public <T extends AttributeKind> Optional<T> kind(Class<T> type) {
    return kinds.stream().filter(type::isInstance).map(type::cast).findFirst();
  }

  /** The keys given by {@code source}, in the kinds' order. */
  public List<String> keys(AttributeSource source) {
    List<String> out = new ArrayList<>();
    for (AttributeKind kind : kinds) {
      kind.keys().stream().filter(k -> k.source() == source).forEach(k -> out.add(k.name()));
    }
    return out;
  }

  /**
   * The values to keep for the keys {@code given} by {@code source}, on a volume shaped as {@code
   * volume}; empty when none is given. Of StorageClass parameters only the kinds' keys are looked
   * at (the others are the driver's own, checked where they are parsed); every mutable parameter
   * must be some kind's. A key no kind owns is refused after each kind of its source has checked
   * the volume, so that on a volume that can have none of them that is what the caller learns.
   *
   * @throws AttributeException naming the first key that is unknown or refused
   */
  public Map<String, String> check(
      AttributeSource source, Map<String, String> given, VolumeShape volume) {
    Map<AttributeKind, Map<String, String>> byKind = new LinkedHashMap<>();
    List<String> unknown = new ArrayList<>();
    given.forEach(
        (key, value) -> {
          AttributeKind owner = owners.get(key);
          if (owner != null && ownedFrom(owner, key, source)) {
            byKind.computeIfAbsent(owner, k -> new LinkedHashMap<>()).put(key, value);
          } else if (source.mutable()) {
            unknown.add(key);
          }
        });
    if (!unknown.isEmpty()) {
      for (AttributeKind kind : kinds) {
        if (kind.keys().stream().anyMatch(k -> k.source() == source)) {
          kind.admit(volume);
        }
      }
      throw unknownKey(source, unknown.get(0));
    }
    Map<String, String> kept = new LinkedHashMap<>();
    for (AttributeKind kind : kinds) {
      Map<String, String> mine = byKind.get(kind);
      if (mine != null) {
        kind.admit(volume);
        kept.putAll(kind.check(mine, volume));
      }
    }
    return kept;
  }

  private static boolean ownedFrom(AttributeKind kind, String key, AttributeSource source) {
    return kind.keys().stream().anyMatch(k -> k.name().equals(key) && k.source() == source);
  }

  private AttributeException unknownKey(AttributeSource source, String key) {
    List<String> names = new ArrayList<>();
    for (AttributeKind kind : kinds) {
      if (kind.keys().stream().anyMatch(k -> k.source() == source)) {
        names.add(kind.name());
      }
    }
    String kindNames = names.isEmpty() ? source.shown() : String.join(" or ", names);
    return AttributeException.refused(
        "unknown %s parameter \"%s\": %s", kindNames, key, knownOnes(keys(source)));
  }

  private static String knownOnes(List<String> keys) {
    if (keys.isEmpty()) {
      return "there are none";
    }
    if (keys.size() == 1) {
      return "the known one is " + keys.get(0);
    }
    return "the known ones are "
        + String.join(", ", keys.subList(0, keys.size() - 1))
        + " and "
        + keys.get(keys.size() - 1);
  }

  /** Whether any kind acts on the node now; when none does the engine need not tell it anything. */
  public boolean acting() {
    return kinds.stream().anyMatch(k -> k.effects().isPresent());
  }

  /** Whether {@code kept} (a volume's kept parameters) holds any kind's value. */
  public boolean anyIn(Map<String, String> kept) {
    return kept.keySet().stream().anyMatch(owners::containsKey);
  }

  /**
   * The StorageClass parameters a copy keeps: {@code requested} with each kind's keys as the kind
   * says from the {@code source}'s kept values ({@link AttributeKind#copied}).
   */
  public Map<String, String> copied(Map<String, String> source, Map<String, String> requested) {
    Map<String, String> out = new LinkedHashMap<>(requested);
    for (AttributeKind kind : kinds) {
      Map<String, String> asked = classValuesOf(kind, requested);
      Map<String, String> kept = kind.copied(classValuesOf(kind, source), asked);
      asked.keySet().forEach(out::remove);
      out.putAll(kept);
    }
    return out;
  }

  /** The filesystem features the kinds need for {@code kept}, each once, in the kinds' order. */
  public List<String> filesystemFeatures(Map<String, String> kept) {
    List<String> out = new ArrayList<>();
    for (AttributeKind kind : kinds) {
      kind.filesystemFeatures(valuesOf(kind, kept)).stream()
          .filter(f -> !out.contains(f))
          .forEach(out::add);
    }
    return out;
  }

  /**
   * The directory pods see instead of the filesystem's root, as the first kind that has one says.
   */
  public Optional<String> presentedDirectory(Map<String, String> kept) {
    for (AttributeKind kind : kinds) {
      Optional<String> directory = kind.presentedDirectory(valuesOf(kind, kept));
      if (directory.isPresent()) {
        return directory;
      }
    }
    return Optional.empty();
  }

  /** Whether a kind says the staging mount of a volume that kept {@code kept} holds state. */
  public boolean mountHoldsState(Map<String, String> kept) {
    return kinds.stream().anyMatch(kind -> kind.mountHoldsState(valuesOf(kind, kept)));
  }

  public void staging(String volumeId, Map<String, String> kept, NodeSecrets secrets) {
    each(kept, (effects, values) -> effects.staging(volumeId, values, secrets));
  }

  public void staged(String volumeId, Path stagingPath, Map<String, String> kept) {
    staged(volumeId, stagingPath, kept, NodeSecrets.none());
  }

  public void staged(
      String volumeId, Path stagingPath, Map<String, String> kept, NodeSecrets secrets) {
    each(kept, (effects, values) -> effects.staged(volumeId, stagingPath, values, secrets));
  }

  public void unstaging(String volumeId, Path stagingPath, Map<String, String> kept) {
    each(kept, (effects, values) -> effects.unstaging(volumeId, stagingPath, values));
  }

  public void unstaged(String volumeId, Path stagingPath) {
    each(Map.of(), (effects, values) -> effects.unstaged(volumeId, stagingPath));
  }

  public void published(Publication publication, Map<String, String> kept) {
    each(kept, (effects, values) -> effects.published(publication, values));
  }

  public void unpublished(String volumeId, Path target) {
    each(Map.of(), (effects, values) -> effects.unpublished(volumeId, target));
  }

  /** The volume's mutable values are now {@code kept}'s; each kind hears of its own. */
  public void changed(String volumeId, Map<String, String> kept) {
    each(kept, (effects, values) -> effects.changed(volumeId, values));
  }

  /** Calls each acting kind with its own values of {@code kept}. */
  private void each(Map<String, String> kept, BiConsumer<AttributeEffects, Map<String, String>> c) {
    for (AttributeKind kind : kinds) {
      kind.effects().ifPresent(effects -> c.accept(effects, valuesOf(kind, kept)));
    }
  }

  private Map<String, String> classValuesOf(AttributeKind kind, Map<String, String> kept) {
    Map<String, String> out = new LinkedHashMap<>();
    kept.forEach(
        (key, value) -> {
          if (ownedFrom(kind, key, AttributeSource.CLASS_PARAMETERS)) {
            out.put(key, value);
          }
        });
    return out;
  }

  private Map<String, String> valuesOf(AttributeKind kind, Map<String, String> kept) {
    Map<String, String> out = new LinkedHashMap<>();
    kept.forEach(
        (key, value) -> {
          if (owners.get(key) == kind) {
            out.put(key, value);
          }
        });
    return out;
  }
}
