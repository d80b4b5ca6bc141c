package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.Map;

/** 4.0: no KRaftVersionAccessor (a kraft.version update is a FeatureLevelRecord that replay skips,
 *  KAFKA-18979); metadataVersion() has a builder default; updateFeatures has no claimed epoch. */
final class ShimImpl extends Shim4 {
    @Override
    FeatureControlManager featureControl(LogContext logContext, SnapshotRegistry registry, QuorumFeatures quorumFeatures,
                                         ClusterFeatureSupportDescriber describer, KRaftVersionHolder kraft) {
        return new FeatureControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(registry)
            .setQuorumFeatures(quorumFeatures)
            .setClusterFeatureSupportDescriber(orEmpty(describer))
            .build();
    }

    @Override
    MetadataVersion metadataVersion(FeatureControlManager features) {
        return features.metadataVersion();
    }

    @Override
    ControllerResult<ApiError> configUpdate(Cluster c, Map<String, Short> updates,
                                            Map<String, FeatureUpdate.UpgradeType> types, boolean validateOnly) {
        return c.configControl.updateFeatures(updates, types, validateOnly);
    }
}
