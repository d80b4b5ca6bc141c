package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

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
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The calls whose signatures move between releases.  This base holds only what every supported
 *  release (3.7 on) shares; ShimImpl (one per release line, in shims/LINE/; a line without its own
 *  uses the newest below it) supplies the rest, usually through a layer it shares with its
 *  neighbours (layers/FROM-TO/: Shim4 for 4.x, Shim3 for 3.x). */
abstract class Shim {
    static final Shim INSTANCE = new ShimImpl();

    /** The ops this release's code can answer (the hello): an op it cannot express is left out, not faked. */
    List<String> capabilities() {
        return List.of(Cluster.CAPABILITIES);
    }

    abstract Map<String, VersionRange> controllerRanges(boolean unstable);

    Map<String, VersionRange> brokerRanges(boolean unstable) {
        Map<String, VersionRange> out = new HashMap<>();
        brokerFeatures(unstable).features().forEach((k, v) -> out.put(k, VersionRange.of(v.min(), v.max())));
        return out;
    }

    abstract Features<SupportedVersionRange> brokerFeatures(boolean unstable);

    /** The production features kafka-storage format writes (besides metadata.version), in its order. */
    abstract List<String> productionFeatureNames();

    abstract FeatureControlManager featureControl(LogContext logContext, SnapshotRegistry registry,
                                                  QuorumFeatures quorumFeatures, ClusterFeatureSupportDescriber describer,
                                                  KRaftVersionHolder kraft);

    abstract ConfigurationControlManager configControl(LogContext logContext, SnapshotRegistry registry,
                                                       FeatureControlManager features, int nodeId);

    /** The builder's release-specific settings (the shutdown handler QuorumController installs). */
    abstract ClusterControlManager.Builder clusterControl(ClusterControlManager.Builder builder);

    abstract MetadataVersion metadataVersion(FeatureControlManager features);

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

    abstract ControllerResult<BrokerRegistrationReply> registerBroker(Cluster c, BrokerRegistrationRequestData request, int version);

    /** The broker's earlier session is still alive (a heartbeat just now). */
    abstract void keepSession(Cluster c, int brokerId, long brokerEpoch);

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

    /** QuorumController.updateFeatures and the response ControllerApis sends. */
    abstract UpdateFeaturesResponseData updateFeatures(Cluster c, UpdateFeaturesRequestData request, int version);

    /** What a node's ApiVersionsResponse carries: "supported", "finalized" and "epoch" into `out`. */
    abstract void apiVersions(Map<String, VersionRange> ranges, Map<String, Short> finalized, long epoch, short version, ObjectNode out);

    /** The features of a response as the protocol writes them (sorted by name). */
    static void writeApiVersions(ApiVersionsResponseData data, ObjectNode out) {
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

    /** Whether a controller's ApiVersions carries the raft layer's kraft.version (KAFKA-18920: 3.9.1, 4.0.0). */
    boolean controllerReportsKRaftVersion() {
        return true;
    }

    /** The configuration that lets kafka-storage format write unstable versions. */
    String unstableFeatureVersionsConfig() {
        return "unstable.feature.versions.enable";
    }

    /** kafka-storage's argument parser (StorageTool.parseArguments); a refusal is an ArgumentParserException. */
    net.sourceforge.argparse4j.inf.Namespace parseStorageArguments(String[] argv) throws Exception {
        return kafka.tools.StorageTool.parseArguments(argv);
    }

    /** kafka-storage format's own code path on a scratch configuration; the bootstrap it wrote. */
    abstract void runFormat(net.sourceforge.argparse4j.inf.Namespace ns, java.util.Properties props, java.io.PrintStream ps) throws Exception;

    abstract BootstrapMetadata readBootstrap(String metadataDir) throws Exception;

    /** A feature's level in the bootstrap records (0 when it has no record, as BootstrapMetadata.featureLevel). */
    short featureLevel(BootstrapMetadata boot, String feature) {
        for (org.apache.kafka.server.common.ApiMessageAndVersion r : boot.records()) {
            if (r.message() instanceof org.apache.kafka.common.metadata.FeatureLevelRecord) {
                org.apache.kafka.common.metadata.FeatureLevelRecord f = (org.apache.kafka.common.metadata.FeatureLevelRecord) r.message();
                if (f.name().equals(feature)) return f.featureLevel();
            }
        }
        return 0;
    }

    /** The Formatter's own decision whether the formatted quorum is dynamic (kraft.version 1 by default). */
    abstract boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers, boolean staticVotersEmpty)
        throws ReflectiveOperationException;

    /** kafka-storage run on these arguments (StorageTool.execute), printing to `ps`. */
    abstract void storageTool(String[] argv, java.io.PrintStream ps) throws Exception;

    /** feature-dependencies of kafka-storage or kafka-features. */
    abstract List<String> featureDependencies(com.fasterxml.jackson.databind.JsonNode cmd, List<String> argv) throws Tools.ToolFailure;
}
