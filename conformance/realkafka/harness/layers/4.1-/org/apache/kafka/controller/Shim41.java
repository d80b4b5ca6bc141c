package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.Map;

/** What 4.1-4.4 share: kraft.version lives in the raft layer (KRaftVersionAccessor); the
 *  metadata.version is unknown until the bootstrap records are replayed; updateFeatures takes the
 *  claimed epoch; UnregisterBroker's error carries the message.  The 4.1 and 4.4 shims extend it. */
abstract class Shim41 extends Shim4 {
    @Override
    FeatureControlManager featureControl(LogContext logContext, SnapshotRegistry registry, QuorumFeatures quorumFeatures,
                                         ClusterFeatureSupportDescriber describer, KRaftVersionHolder kraft) {
        return new FeatureControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(registry)
            .setQuorumFeatures(quorumFeatures)
            .setClusterFeatureSupportDescriber(orEmpty(describer))
            .setKRaftVersionAccessor(new KRaftAccessor(kraft))
            .build();
    }

    @Override
    MetadataVersion metadataVersion(FeatureControlManager features) {
        return features.metadataVersionOrThrow();
    }

    @Override
    ControllerResult<ApiError> configUpdate(Cluster c, Map<String, Short> updates,
                                            Map<String, FeatureUpdate.UpgradeType> types, boolean validateOnly) {
        return c.configControl.updateFeatures(updates, types, validateOnly, 1);
    }

    /** 4.1+: UnregisterBrokerRequest.getErrorResponse carries the exception's message. */
    @Override
    String unregisterBrokerMessage(ApiException e) {
        return e.getMessage();
    }
}
