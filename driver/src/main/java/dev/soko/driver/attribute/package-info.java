/**
 * Per-volume attributes: the one place where a kind of attribute (IO limits today) is declared,
 * checked, kept and applied. A kind ({@link AttributeKind}) names its keys and where each comes
 * from ({@link AttributeSource}: a StorageClass parameter, fixed at creation, or a
 * VolumeAttributesClass's mutable parameter, changed by ModifyVolume), checks the values against
 * the volume they would be set on ({@link VolumeShape}) with a refusal that carries its CSI meaning
 * ({@link AttributeException}), and may act on the node when the volume is staged, published,
 * unpublished or changed ({@link AttributeEffects}). {@link AttributeRegistry} holds the kinds and
 * is what the engine calls; it routes keys to kinds, so that a new kind is a class of its own and
 * one entry in the engine's list, and changes nothing in the volume manager.
 *
 * <p>Values are kept where the volume's record already keeps its parameters (a class parameter
 * under {@code param.}, a mutable one under {@code mutable.}), so that records written before this
 * package existed read as they always did. A leaf package: the engine depends on it, each kind's
 * package implements it, and it depends on neither.
 */
package dev.soko.driver.attribute;
