package dev.soko.driver.transfer;

import dev.soko.driver.model.AccessType;
import io.grpc.Channel;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What a node described of a snapshot (or volume) and how to stream it from there: the channel to
 * its data port, the stall after which a stream is cut, the resumes a cut stream gets and the timer
 * that watches for stalls.
 */
record StreamSource(
    Channel channel,
    String id,
    boolean ofVolume,
    String node,
    String endpoint,
    long sizeBytes,
    AccessType accessType,
    String fsType,
    Duration stall,
    Resumes resumes,
    ScheduledExecutorService timer) {}
