package org.apache.kafka.controller;

import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.KRaftVersion;

import java.util.Map;

/** The raft layer's kraft.version as the controller sees it (4.1+: through KRaftVersionAccessor, the
 *  shim's KRaftAccessor; 4.0 writes a FeatureLevelRecord that replay skips, KAFKA-18979).  There
 *  is no raft client here: an upgrade is checked against the voters' kraft.version ranges with the
 *  checks and messages of LeaderState.maybeAppendUpgradedKRaftVersion, and commits with the
 *  NoOpRecord FeatureControlManager writes for it (a documented harness limit). */
final class KRaftVersionHolder {
    private final Cluster cluster;
    short level;
    short pending = -1;

    KRaftVersionHolder(Cluster cluster, short level) {
        this.cluster = cluster;
        this.level = level;
    }

    KRaftVersion kraftVersion() {
        return KRaftVersion.fromFeatureLevel(level);
    }

    void upgradeKRaftVersion(int epoch, KRaftVersion newVersion, boolean validateOnly) {
        KRaftVersion persisted = kraftVersion();
        if (persisted.equals(newVersion)) {
            if (!validateOnly) pending = level;  // a no-op upgrade still commits with its NoOpRecord
            return;
        }
        if (persisted.featureLevel() > newVersion.featureLevel()) {
            throw new InvalidUpdateVersionException(String.format(
                "Invalid upgrade of %s from version %s to %s because the new version is a downgrade",
                KRaftVersion.FEATURE_NAME, persisted, newVersion));
        }
        for (int id : cluster.voters) {
            Map<String, VersionRange> ranges = cluster.controllers.get(id);
            VersionRange r = ranges == null ? null : ranges.get(KRaftVersion.FEATURE_NAME);
            if (r == null || !r.contains(newVersion.featureLevel())) {
                throw new InvalidUpdateVersionException(String.format(
                    "Invalid upgrade of %s to %s because not all of the voters support it",
                    KRaftVersion.FEATURE_NAME, newVersion));
            }
        }
        if (!validateOnly) pending = newVersion.featureLevel();
    }
}
