package org.apache.kafka.controller;

import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.feature.Features;
import org.apache.kafka.common.feature.SupportedVersionRange;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.metadata.VersionRange;

import java.util.HashMap;
import java.util.Map;

/** Calls 3.9 and 4.x share (the 3.9 shim and Shim4 delegate to them): ApiVersionsResponse.Builder with
 *  alterFeatureLevel0, StorageTool.runFormatCommand/execute with a PrintStream, the Java Formatter. */
final class Since39 {
    private Since39() { }

    /** What a node's ApiVersionsResponse carries (ApiVersionManager.apiVersionResponse(…, version < 4)). */
    static void apiVersions(Map<String, VersionRange> ranges, Map<String, Short> finalized, long epoch, short version, ObjectNode out) {
        Map<String, SupportedVersionRange> supported = new HashMap<>();
        ranges.forEach((k, v) -> supported.put(k, new SupportedVersionRange(v.min(), v.max())));
        ApiVersionsResponseData data = new ApiVersionsResponse.Builder()
            .setApiVersions(new ApiVersionsResponseData.ApiVersionCollection())
            .setSupportedFeatures(Features.supportedFeatures(supported))
            .setFinalizedFeatures(finalized)
            .setFinalizedFeaturesEpoch(epoch)
            .setAlterFeatureLevel0(version < 4)
            .build().data();
        Shim.writeApiVersions(data, out);
    }

    /** kafka-storage format's own code path (StorageTool.runFormatCommand) on a scratch configuration. */
    static void runFormat(net.sourceforge.argparse4j.inf.Namespace ns, java.util.Properties props, java.io.PrintStream ps) throws Exception {
        kafka.tools.StorageTool.runFormatCommand(ns, kafkaConfig(props), ps);
    }

    /** One KafkaConfig per distinct scratch configuration: building one is ~40% of a format's time, and
     *  format only reads it (a refused configuration throws and is not kept). */
    static kafka.server.KafkaConfig kafkaConfig(java.util.Properties props) {
        return CONFIGS.computeIfAbsent(new java.util.TreeMap<>(props).toString(), k -> new kafka.server.KafkaConfig(props));
    }

    private static final Map<String, kafka.server.KafkaConfig> CONFIGS = new HashMap<>();

    static void storageTool(String[] argv, java.io.PrintStream ps) throws Exception {
        kafka.tools.StorageTool.execute(argv, ps);
    }

    static boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers, boolean staticVotersEmpty)
        throws ReflectiveOperationException {
        return org.apache.kafka.metadata.storage.KfcFormatterProbe.hasDynamicQuorum(initialControllers,
            noInitialControllers, staticVotersEmpty);
    }
}
