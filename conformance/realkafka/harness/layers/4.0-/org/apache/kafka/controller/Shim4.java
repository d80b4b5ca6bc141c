package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.UpdateFeaturesResponseData;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.bootstrap.BootstrapDirectory;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What 4.0-4.2 share (the 4.0 and 4.1 shims extend it). */
abstract class Shim4 extends Shim {
    @Override
    Map<String, VersionRange> controllerRanges(boolean unstable) {
        return new HashMap<>(QuorumFeatures.defaultSupportedFeatureMap(unstable));
    }

    @Override
    Features<SupportedVersionRange> brokerFeatures(boolean unstable) {
        return org.apache.kafka.server.BrokerFeatures.defaultSupportedFeatures(unstable);
    }

    List<Feature> productionFeatures() {
        return Feature.PRODUCTION_FEATURES;
    }

    @Override
    List<String> productionFeatureNames() {
        List<String> out = new ArrayList<>();
        productionFeatures().forEach(f -> out.add(f.featureName()));
        return out;
    }

    @Override
    ConfigurationControlManager configControl(LogContext logContext, SnapshotRegistry registry,
                                              FeatureControlManager features, int nodeId) {
        return new ConfigurationControlManager.Builder()
            .setLogContext(logContext)
            .setSnapshotRegistry(registry)
            .setKafkaConfigSchema(kafka.server.KafkaRaftServer.configSchema())
            .setNodeId(nodeId)
            .setFeatureControl(features)
            .build();
    }

    @Override
    ClusterControlManager.Builder clusterControl(ClusterControlManager.Builder builder) {
        return builder.setBrokerShutdownHandler((id, clean, records) -> { });
    }

    abstract ControllerResult<ApiError> configUpdate(Cluster c, Map<String, Short> updates,
                                                     Map<String, FeatureUpdate.UpgradeType> types, boolean validateOnly);

    @Override
    ControllerResult<BrokerRegistrationReply> registerBroker(Cluster c, BrokerRegistrationRequestData request, int version) {
        return c.clusterControl.registerBroker(request, c.nextOffset, c.registrationFeatures(), version >= 3);
    }

    @Override
    void keepSession(Cluster c, int brokerId, long brokerEpoch) {
        c.clusterControl.trackBrokerHeartbeat(brokerId, brokerEpoch);
    }

    /** QuorumController.updateFeatures (4.x): fail fast, per-feature results only on success at v0-v1. */
    @Override
    UpdateFeaturesResponseData updateFeatures(Cluster c, UpdateFeaturesRequestData request, int version) {
        ApiError result = controllerUpdate(c, request).response();
        UpdateFeaturesResponseData data = new UpdateFeaturesResponseData();
        if (result != ApiError.NONE && !result.isSuccess()) {
            data.setErrorCode(result.error().code());
            data.setErrorMessage("The update failed for all features since the following feature had an error: "
                + result.message());
        } else {
            data.setErrorCode(result.error().code());
            data.setErrorMessage(result.message());
            if (version <= 1) {
                request.featureUpdates().forEach(u -> data.results().add(new UpdateFeaturesResponseData.UpdatableFeatureResult()
                    .setFeature(u.feature()).setErrorCode(result.error().code()).setErrorMessage(result.error().message())));
            }
        }
        return data;
    }

    /** QuorumController.updateFeatures: the request's updates into ConfigurationControlManager.updateFeatures. */
    ControllerResult<ApiError> controllerUpdate(Cluster c, UpdateFeaturesRequestData request) {
        Map<String, Short> updates = new HashMap<>();
        Map<String, FeatureUpdate.UpgradeType> types = new HashMap<>();
        request.featureUpdates().forEach(u -> {
            types.put(u.feature(), FeatureUpdate.UpgradeType.fromCode(u.upgradeType()));
            updates.put(u.feature(), u.maxVersionLevel());
        });
        ControllerResult<ApiError> result = configUpdate(c, updates, types, request.validateOnly());
        if (result.response().isSuccess() && !request.validateOnly()) c.pendingRecords = result.records();
        return result;
    }

    @Override
    void apiVersions(Map<String, VersionRange> ranges, Map<String, Short> finalized, long epoch, short version, ObjectNode out) {
        Since39.apiVersions(ranges, finalized, epoch, version, out);
    }

    @Override
    void runFormat(net.sourceforge.argparse4j.inf.Namespace ns, java.util.Properties props, java.io.PrintStream ps) throws Exception {
        Since39.runFormat(ns, props, ps);
    }

    @Override
    BootstrapMetadata readBootstrap(String metadataDir) throws Exception {
        return new BootstrapDirectory(metadataDir).read();
    }

    @Override
    short featureLevel(BootstrapMetadata boot, String feature) {
        return boot.featureLevel(feature);
    }

    @Override
    boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers, boolean staticVotersEmpty)
        throws ReflectiveOperationException {
        return Since39.hasDynamicQuorum(initialControllers, noInitialControllers, staticVotersEmpty);
    }

    @Override
    void storageTool(String[] argv, java.io.PrintStream ps) throws Exception {
        Since39.storageTool(argv, ps);
    }

    /** feature-dependencies of kafka-storage. */
    @Override
    List<String> featureDependencies(com.fasterxml.jackson.databind.JsonNode cmd, List<String> argv) throws Tools.ToolFailure {
        if (!cmd.path("tool").asText("").equals("kafka-features")) return Tools.storageTool(argv);
        List<String> items = new ArrayList<>();
        for (int i = 1; i + 1 < argv.size(); i += 2) items.add(argv.get(i + 1));
        if (items.isEmpty()) throw new Tools.ToolFailure("argument --feature/-f is required", List.of());
        StringBuilder printed = new StringBuilder();
        try {
            return KfcHarness.lines(org.apache.kafka.tools.KfcFeatureDependencies.featureDependencies(items, productionFeatures(), printed));
        } catch (Exception e) {
            throw new Tools.ToolFailure(Tools.rootMessage(e), KfcHarness.lines(printed.toString()));
        }
    }
}
