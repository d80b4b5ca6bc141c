package org.apache.kafka.controller;

import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** 3.8: kafka-storage format in Scala (--feature, no quorum flags), printing on System.out;
 *  registerBroker takes the request version; no kraft.version (static quorums only). */
final class ShimImpl extends Shim3 {
    @Override
    List<String> productionFeatureNames() {
        List<String> out = new ArrayList<>();
        org.apache.kafka.server.common.Features.PRODUCTION_FEATURES.forEach(f -> out.add(f.featureName()));
        return out;
    }

    @Override
    ClusterControlManager.Builder clusterControl(ClusterControlManager.Builder builder) {
        return builder.setBrokerUncleanShutdownHandler((id, records) -> { });
    }

    @Override
    net.sourceforge.argparse4j.inf.Namespace parseStorageArguments(String[] argv) throws Exception {
        return Until38.parseArguments(argv);
    }

    @Override
    void apiVersions(java.util.Map<String, org.apache.kafka.metadata.VersionRange> ranges, java.util.Map<String, Short> finalized,
                     long epoch, short version, com.fasterxml.jackson.databind.node.ObjectNode out) {
        Until38.apiVersions(ranges, finalized, epoch, out);
    }

    /** QuorumController.registerBroker (3.7/3.8): the finalized features, the request's version. */
    @Override
    ControllerResult<BrokerRegistrationReply> registerBroker(Cluster c, BrokerRegistrationRequestData request, int version) {
        FinalizedControllerFeatures finalized = c.features.finalizedFeatures(Long.MAX_VALUE);
        return c.clusterControl.registerBroker(request, c.nextOffset, finalized, (short) version);
    }

    @Override
    void runFormat(net.sourceforge.argparse4j.inf.Namespace ns, java.util.Properties props, PrintStream ps) throws Exception {
        PrintStream saved = System.out;
        System.setOut(ps);
        int code;
        try {
            code = kafka.tools.StorageTool.runFormatCommand(ns, new kafka.server.KafkaConfig(props));
        } finally {
            System.setOut(saved);
        }
        if (code != 0) throw new IllegalStateException("kafka-storage format exited with status " + code);
    }

    /** No dynamic quorum before 3.9 (KIP-853): controller.quorum.voters only. */
    @Override
    boolean hasDynamicQuorum(String initialControllers, boolean noInitialControllers, boolean staticVotersEmpty) {
        return false;
    }

    @Override
    void storageTool(String[] argv, PrintStream ps) throws Exception {
        PrintStream saved = System.out;
        System.setOut(new PrintStream(ps, true, StandardCharsets.UTF_8));
        try {
            kafka.tools.StorageTool.execute(argv);
        } finally {
            System.setOut(saved);
        }
    }
}
