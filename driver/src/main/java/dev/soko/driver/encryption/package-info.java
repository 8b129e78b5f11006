/**
 * Encryption at rest as a kind of per-volume attribute ({@link
 * dev.soko.driver.encryption.EncryptionAttribute}): the kernel's filesystem encryption (fscrypt, v2
 * policies) on ext4 volumes of image-file pools, with a key from each volume's node-stage Secret.
 * Reaches the engine only through the attribute registry; no key leaves this package in a message,
 * a log line or a record.
 */
package dev.soko.driver.encryption;
