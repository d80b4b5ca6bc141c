package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.UpdateFeaturesResponseData;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.bootstrap.BootstrapDirectory;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What 3.7-3.9 share: FeatureControlManager answers UpdateFeatures itself (per feature, no
 *  ConfigurationControlManager check), the Scala BrokerFeatures, no ApiVersions v4, and kafka-storage
 *  has no version-mapping or feature-dependencies (left out of the capabilities). */
abstract class Shim3 extends Shim {
    @Override
    List<String> capabilities() {
        List<String> out = new ArrayList<>(super.capabilities());
        out.removeAll(List.of("version_mapping", "feature_dependencies"));
        return out;
    }

    @Override
    Map<String, VersionRange> controllerRanges(boolean unstable) {
        return new HashMap<>(QuorumFeatures.defaultFeatureMap(unstable));
    }

    @Override
    Features<SupportedVersionRange> brokerFeatures(boolean unstable) {
        return kafka.server.BrokerFeatures.defaultSupportedFeatures(unstable);
    }

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
    ConfigurationControlManager configControl(LogContext logContext, SnapshotRegistry registry,
                                              FeatureControlManager features, int nodeId) {
        return new ConfigurationControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(registry)
            .setKafkaConfigSchema(kafka.server.KafkaRaftServer.configSchema())
            .setNodeId(nodeId)
            .build();
    }

    @Override
    MetadataVersion metadataVersion(FeatureControlManager features) {
        return features.metadataVersion();
    }

    @Override
    void keepSession(Cluster c, int brokerId, long brokerEpoch) {
        // ClusterControlManager's heartbeat path (BrokerHeartbeatManager.touch) at the broker's fencing state.
        c.clusterControl.heartbeatManager().touch(brokerId, c.clusterControl.brokerRegistrations().get(brokerId).fenced(), -1L);
    }

    /** QuorumController.updateFeatures (3.x): FeatureControlManager.updateFeatures, one result per feature,
     *  the records of the features that passed committed atomically (no top-level error). */
    @Override
    UpdateFeaturesResponseData updateFeatures(Cluster c, UpdateFeaturesRequestData request, int version) {
        Map<String, Short> updates = new HashMap<>();
        Map<String, FeatureUpdate.UpgradeType> types = new HashMap<>();
        request.featureUpdates().forEach(u -> {
            types.put(u.feature(), FeatureUpdate.UpgradeType.fromCode(u.upgradeType()));
            updates.put(u.feature(), u.maxVersionLevel());
        });
        ControllerResult<Map<String, ApiError>> result = c.features.updateFeatures(updates, types, request.validateOnly());
        if (!result.records().isEmpty()) c.pendingRecords = result.records();
        UpdateFeaturesResponseData data = new UpdateFeaturesResponseData();
        data.setResults(new UpdateFeaturesResponseData.UpdatableFeatureResultCollection(result.response().size()));
        result.response().forEach((name, error) -> data.results().add(new UpdateFeaturesResponseData.UpdatableFeatureResult()
            .setFeature(name).setErrorCode(error.error().code()).setErrorMessage(error.message())));
        return data;
    }

    @Override
    BootstrapMetadata readBootstrap(String metadataDir) throws Exception {
        return new BootstrapDirectory(metadataDir, Optional.empty()).read();
    }

    @Override
    List<String> featureDependencies(com.fasterxml.jackson.databind.JsonNode cmd, List<String> argv) throws Tools.ToolFailure {
        // Not in the capabilities (Cluster.apply refuses the op first): neither tool has the command in 3.x.
        throw new Tools.ToolFailure("feature-dependencies is not a command of this release's tools", List.of());
    }
}
