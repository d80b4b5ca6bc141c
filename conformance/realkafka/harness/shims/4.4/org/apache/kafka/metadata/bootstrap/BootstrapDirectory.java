package org.apache.kafka.metadata.bootstrap;

import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.snapshot.Snapshots;

import java.nio.file.Path;

/** 4.4 removed BootstrapDirectory: its Formatter writes the bootstrap records into the metadata log's
 *  bootstrap snapshot (Formatter.writeBoostrapSnapshot, offset 0 epoch 0) instead of bootstrap.checkpoint.
 *  This reads them back from there (as 4.4's own BootstrapTestUtils.readBootstrapMetadata does), under
 *  the name the core uses for 4.0-4.3. */
public final class BootstrapDirectory {
    private final String directory;

    public BootstrapDirectory(String directory) {
        this.directory = directory;
    }

    public BootstrapMetadata read() {
        Path partition = Path.of(directory, Topic.CLUSTER_METADATA_TOPIC_PARTITION.topic() + "-"
            + Topic.CLUSTER_METADATA_TOPIC_PARTITION.partition());
        return BootstrapMetadata.fromCheckpointFile(Snapshots.snapshotPath(partition, Snapshots.BOOTSTRAP_SNAPSHOT_ID));
    }
}
