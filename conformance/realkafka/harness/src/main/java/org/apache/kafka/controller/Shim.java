package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.UpdateFeaturesRequestData;
import org.apache.kafka.common.message.UpdateFeaturesResponseData;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The calls whose signatures move between releases.  This base holds what 4.0-4.2 share; ShimImpl
 *  (one per release line, in shims/LINE/; a line without its own uses the newest below it) supplies
 *  the few that moved, and overrides what its line does differently. */
abstract class Shim {
    static final Shim INSTANCE = new ShimImpl();

    Map<String, VersionRange> controllerRanges(boolean unstable) {
        return new HashMap<>(QuorumFeatures.defaultSupportedFeatureMap(unstable));
    }

    Map<String, VersionRange> brokerRanges(boolean unstable) {
        Map<String, VersionRange> out = new HashMap<>();
        brokerFeatures(unstable).features().forEach((k, v) -> out.put(k, VersionRange.of(v.min(), v.max())));
        return out;
    }

    Features<SupportedVersionRange> brokerFeatures(boolean unstable) {
        return org.apache.kafka.server.BrokerFeatures.defaultSupportedFeatures(unstable);
    }

    List<Feature> productionFeatures() {
        return Feature.PRODUCTION_FEATURES;
    }

    abstract FeatureControlManager featureControl(LogContext logContext, SnapshotRegistry registry,
                                                  QuorumFeatures quorumFeatures, ClusterFeatureSupportDescriber describer,
                                                  KRaftVersionHolder kraft);

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

    abstract MetadataVersion metadataVersion(FeatureControlManager features);

    abstract ControllerResult<ApiError> configUpdate(Cluster c, Map<String, Short> updates,
                                                     Map<String, FeatureUpdate.UpgradeType> types, boolean validateOnly);

    /** A describer for a manager that only replays (no cluster to ask). */
    static ClusterFeatureSupportDescriber orEmpty(ClusterFeatureSupportDescriber describer) {
        return describer != null ? describer : new ClusterFeatureSupportDescriber() {
            @Override
            public java.util.Iterator<Map.Entry<Integer, Map<String, VersionRange>>> brokerSupported() {
                return java.util.Collections.emptyIterator();
            }

            @Override
            public java.util.Iterator<Map.Entry<Integer, Map<String, VersionRange>>> controllerSupported() {
                return java.util.Collections.emptyIterator();
            }
        };
    }

    ControllerResult<BrokerRegistrationReply> registerBroker(Cluster c, BrokerRegistrationRequestData request, int version) {
        return c.clusterControl.registerBroker(request, c.nextOffset, c.registrationFeatures(), version >= 3);
    }

    /** QuorumController.updateFeatures (4.x): fail fast, per-feature results only on success at v0-v1. */
    UpdateFeaturesResponseData updateFeatures(Cluster c, UpdateFeaturesRequestData request, int version) {
        ApiError result = c.controllerUpdate(request).response();
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

    /** UnregisterBroker's error message: before 4.1 ControllerApis.handleUnregisterBroker sets the code only. */
    String unregisterBrokerMessage(ApiException e) {
        return null;
    }

    /** UnregisterController (KIP-1312, API key 94): only 4.4+ has it. */
    ControllerResult<Void> unregisterController(Cluster c, int id) {
        throw new UnsupportedVersionException("UnregisterController (API key 94) is not supported by " + c.profile);
    }

    /** The controller an UnregisterControllerRecord (4.4+) removes, or -1 for any other record. */
    int unregisteredController(ApiMessage m) {
        return -1;
    }

    /** ClusterControlManager.replay of that record (4.4+). */
    void replayUnregisterController(Cluster c, ApiMessage m) {
        throw new IllegalStateException("this release has no UnregisterControllerRecord");
    }

    /** The error a broker answers an ApiVersions request of this version with before any feature
     *  information (KafkaApis.handleApiVersionsRequest); null: none.  Releases before ApiVersions v5 have none. */
    Errors apiVersionsError(short version, JsonNode cmd, String clusterId, int nodeId) {
        return null;
    }

    /** What a node's ApiVersionsResponse carries (ApiVersionManager.apiVersionResponse(…, version < 4)). */
    void apiVersions(Map<String, VersionRange> ranges, Map<String, Short> finalized, long epoch, short version, ObjectNode out) {
        Map<String, SupportedVersionRange> supported = new HashMap<>();
        ranges.forEach((k, v) -> supported.put(k, new SupportedVersionRange(v.min(), v.max())));
        ApiVersionsResponseData data = new ApiVersionsResponse.Builder()
            .setApiVersions(new ApiVersionsResponseData.ApiVersionCollection())
            .setSupportedFeatures(Features.supportedFeatures(supported))
            .setFinalizedFeatures(finalized)
            .setFinalizedFeaturesEpoch(epoch)
            .setAlterFeatureLevel0(version < 4)
            .build().data();
        ObjectNode s = out.putObject("supported");
        TreeMap<String, short[]> sorted = new TreeMap<>();
        data.supportedFeatures().forEach(f -> sorted.put(f.name(), new short[]{f.minVersion(), f.maxVersion()}));
        sorted.forEach((k, v) -> s.putArray(k).add(v[0]).add(v[1]));
        ObjectNode f = out.putObject("finalized");
        TreeMap<String, Short> fin = new TreeMap<>();
        data.finalizedFeatures().forEach(x -> fin.put(x.name(), x.maxVersionLevel()));
        fin.forEach(f::put);
        out.put("epoch", data.finalizedFeaturesEpoch());
    }

    /** kafka-storage format's own code path (StorageTool.runFormatCommand) on a scratch configuration. */
    void runFormat(net.sourceforge.argparse4j.inf.Namespace ns, java.util.Properties props, java.io.PrintStream ps) throws Exception {
        kafka.tools.StorageTool.runFormatCommand(ns, kafkaConfig(props), ps);
    }

    /** One KafkaConfig per distinct scratch configuration: building one is ~40% of a format's time, and
     *  format only reads it (a refused configuration throws and is not kept). */
    static kafka.server.KafkaConfig kafkaConfig(java.util.Properties props) {
        return CONFIGS.computeIfAbsent(new TreeMap<>(props).toString(), k -> new kafka.server.KafkaConfig(props));
    }

    private static final Map<String, kafka.server.KafkaConfig> CONFIGS = new HashMap<>();

    /** feature-dependencies of kafka-storage. */
    List<String> featureDependencies(com.fasterxml.jackson.databind.JsonNode cmd, List<String> argv) throws Tools.ToolFailure {
        if (!cmd.path("tool").asText("").equals("kafka-features")) return Tools.storageTool(argv);
        List<String> items = new java.util.ArrayList<>();
        for (int i = 1; i + 1 < argv.size(); i += 2) items.add(argv.get(i + 1));
        if (items.isEmpty()) throw new Tools.ToolFailure("argument --feature/-f is required", List.of());
        StringBuilder printed = new StringBuilder();
        try {
            return KfcHarness.lines(org.apache.kafka.tools.KfcFeatureCommand.featureDependencies(items, productionFeatures(), printed));
        } catch (Exception e) {
            throw new Tools.ToolFailure(Tools.rootMessage(e), KfcHarness.lines(printed.toString()));
        }
    }

    /** One line of kafka-features describe (FeatureCommand.handleDescribe's format, its levelToString). */
    String describeLine(String name, int lo, int hi, int fin, long epoch) {
        return String.format("Feature: %s\tSupportedMinVersion: %s\tSupportedMaxVersion: %s\tFinalizedVersionLevel: %s\tEpoch: %s",
            name, level(name, lo), level(name, hi), level(name, fin), epoch);
    }

    static String level(String name, int level) {
        return org.apache.kafka.tools.KfcFeatureCommand.levelToString(name, (short) level);
    }
}
