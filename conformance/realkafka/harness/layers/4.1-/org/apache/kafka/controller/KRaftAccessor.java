package org.apache.kafka.controller;

import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.KRaftVersion;

import java.util.Map;

/** KRaftVersionAccessor over the harness's KRaftVersionHolder: an upgrade is checked against the voters'
 *  kraft.version ranges with the checks and messages of LeaderState.maybeAppendUpgradedKRaftVersion. */
final class KRaftAccessor implements KRaftVersionAccessor {
    private final KRaftVersionHolder holder;

    KRaftAccessor(KRaftVersionHolder holder) {
        this.holder = holder;
    }

    @Override
    public KRaftVersion kraftVersion() {
        return KRaftVersion.fromFeatureLevel(holder.level);
    }

    @Override
    public void upgradeKRaftVersion(int epoch, KRaftVersion newVersion, boolean validateOnly) {
        KRaftVersion persisted = kraftVersion();
        if (persisted.equals(newVersion)) {
            if (!validateOnly) holder.pending = holder.level;  // a no-op upgrade still commits with its NoOpRecord
            return;
        }
        if (persisted.featureLevel() > newVersion.featureLevel()) {
            throw new InvalidUpdateVersionException(String.format(
                "Invalid upgrade of %s from version %s to %s because the new version is a downgrade",
                KRaftVersion.FEATURE_NAME, persisted, newVersion));
        }
        Cluster cluster = holder.cluster;
        for (int id : cluster.voters) {
            Map<String, VersionRange> ranges = cluster.controllers.get(id);
            VersionRange r = ranges == null ? null : ranges.get(KRaftVersion.FEATURE_NAME);
            if (r == null || !r.contains(newVersion.featureLevel())) {
                throw new InvalidUpdateVersionException(String.format(
                    "Invalid upgrade of %s to %s because not all of the voters support it",
                    KRaftVersion.FEATURE_NAME, newVersion));
            }
        }
        if (!validateOnly) holder.pending = newVersion.featureLevel();
    }
}
